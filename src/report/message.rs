//! `raysift explain` and `raysift rules --messages` as text: what the message catalogue knows
//! of a pasted line, and a listing of its templates.

use std::io::{self, Write};

use crate::messages::Message;
use crate::open_world::known::{Explained, Explanation};

/// One pasted line and what is known of it, as a short block.
pub fn explanation(out: &mut impl Write, e: &Explanation) -> io::Result<()> {
    writeln!(out, "{}", e.line)?;
    if e.matches.is_empty() {
        writeln!(
            out,
            "  No template of Ray's or KubeRay's messages matches this line. `raysift rules \
             --messages WORD` searches them."
        )?;
    }
    for (n, m) in e.matches.iter().enumerate() {
        if n > 0 {
            writeln!(out)?;
        }
        explained(out, m)?;
    }
    for k in &e.known_issues {
        writeln!(out, "  known issue {} ({}): {}", k.tracker, k.code, k.title)?;
        writeln!(out, "    affects {}; fixed in {}", k.affects, k.fixed_in)?;
        writeln!(out, "    else: {}", k.workaround)?;
    }
    Ok(())
}

fn explained(out: &mut impl Write, m: &Explained) -> io::Result<()> {
    writeln!(
        out,
        "  {} {}: {} ({}, {})",
        m.project, m.component, m.level, m.id, m.site
    )?;
    writeln!(out, "  template: {}", m.template)?;
    if let Some(exception) = &m.exception {
        writeln!(out, "  raises:   {exception}")?;
    }
    if let Some(reason) = &m.reason {
        writeln!(out, "  reason:   {reason}")?;
    }
    writeln!(
        out,
        "  versions: {}",
        versions(&m.versions, &m.versions_read)
    )?;
    match &m.meaning {
        Some(meaning) => writeln!(out, "  meaning:  {meaning}")?,
        None => writeln!(
            out,
            "  meaning:  not judged yet; the template and its source line are all there is"
        )?,
    }
    if let Some(why) = &m.benign {
        writeln!(out, "  harmless: {why}")?;
    }
    if let Some(c) = &m.cause {
        let rules = if c.rules.is_empty() {
            String::new()
        } else {
            format!(" (rules {})", c.rules.join(", "))
        };
        writeln!(out, "  cause:    {}: {}{rules}", c.id, c.gloss)?;
        for step in &c.next {
            writeln!(out, "  next:     {step}")?;
        }
    }
    Ok(())
}

/// `2.9.3, 2.22.0 of the 12 versions read (2.0.1 to 2.60.0); not in 2.40.0 and later`.
fn versions(have: &[String], read: &[String]) -> String {
    let (Some(first_read), Some(last_read)) = (read.first(), read.last()) else {
        return "unknown".to_string();
    };
    let listed = if have.len() == read.len() {
        "every version read".to_string()
    } else {
        have.join(", ")
    };
    let gone = read
        .iter()
        .rposition(|v| have.contains(v))
        .and_then(|last| read.get(last + 1));
    format!(
        "{listed} (of {} read, {first_read} to {last_read}){}",
        read.len(),
        gone.map(|v| format!("; gone by {v}")).unwrap_or_default()
    )
}

/// One template a line: id, component, level, class and the wording.
pub fn listing(out: &mut impl Write, messages: &[&Message]) -> io::Result<()> {
    for m in messages {
        let class = m.class.as_ref().map_or("-", |c| c.class.as_str());
        writeln!(
            out,
            "{}  {:<17} {:<9} {:<7} {}",
            m.id, m.component, m.level, class, m.template
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::versions;

    fn v(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn versions_say_which_were_read_and_when_the_wording_went() {
        let read = v(&["2.0.1", "2.9.3", "2.40.0", "2.60.0"]);
        assert_eq!(
            versions(&v(&["2.0.1", "2.9.3"]), &read),
            "2.0.1, 2.9.3 (of 4 read, 2.0.1 to 2.60.0); gone by 2.40.0"
        );
        assert_eq!(
            versions(&read, &read),
            "every version read (of 4 read, 2.0.1 to 2.60.0)"
        );
        assert_eq!(versions(&[], &[]), "unknown");
    }
}
