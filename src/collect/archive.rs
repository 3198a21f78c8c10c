//! The collected bundle as it is written: one `.tar.gz`, built in a temporary file next to
//! its destination and renamed over it only once complete, so that a failed or interrupted
//! collection never leaves a partial archive under the name the user asked for. With
//! redaction on, every entry passes through the same `Redactor` as `analyze --redact` before
//! a byte of it is written.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use flate2::Compression;

use crate::redact::Redactor;

/// An archive being written.
pub struct Writer {
    tar: tar::Builder<GzEncoder<BufWriter<File>>>,
    tmp: PathBuf,
    dest: PathBuf,
    /// Folder every entry is under (`raysift-collect-<ns>-<time>`).
    root: String,
    mtime: u64,
    redactor: Option<Redactor>,
    /// Paths written so far, to keep each entry's name unique.
    names: std::collections::BTreeSet<String>,
    pub entries: usize,
    pub bytes: u64,
}

impl Writer {
    /// Starts `dest` (through a temporary file in the same folder).
    pub fn create(
        dest: &Path,
        root: &str,
        mtime: u64,
        redactor: Option<Redactor>,
    ) -> io::Result<Writer> {
        let dir = dest
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(".{name}.raysift-{}.tmp", std::process::id()));
        let file = File::create(&tmp)?;
        let gz = GzEncoder::new(BufWriter::new(file), Compression::default());
        Ok(Writer {
            tar: tar::Builder::new(gz),
            tmp,
            dest: dest.to_path_buf(),
            root: root.to_string(),
            mtime,
            redactor,
            names: Default::default(),
            entries: 0,
            bytes: 0,
        })
    }

    /// Adds a file at `rel` (under the root folder), redacted when asked; returns the path
    /// it got (a repeated name gets `-2`, `-3`… before its extension).
    pub fn add(&mut self, rel: &str, bytes: &[u8]) -> io::Result<String> {
        let rel = self.unique(rel);
        let redacted;
        let data = match &mut self.redactor {
            Some(r) => {
                redacted = r.file_text(&String::from_utf8_lossy(bytes));
                redacted.as_bytes()
            }
            None => bytes,
        };
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(self.mtime);
        header.set_entry_type(tar::EntryType::Regular);
        let path = format!("{}/{rel}", self.root);
        self.tar.append_data(&mut header, &path, data)?;
        self.entries += 1;
        self.bytes += data.len() as u64;
        Ok(rel)
    }

    /// Whether entries are redacted.
    pub fn redacting(&self) -> bool {
        self.redactor.is_some()
    }

    /// The temporary file being written (named in errors).
    pub fn temp_path(&self) -> PathBuf {
        self.tmp.clone()
    }

    fn unique(&mut self, rel: &str) -> String {
        let rel = rel.to_string();
        if self.names.insert(rel.clone()) {
            return rel;
        }
        let (stem, ext) = match rel.rfind('.') {
            Some(i) if i > rel.rfind('/').map_or(0, |s| s + 1) => rel.split_at(i),
            _ => (rel.as_str(), ""),
        };
        let mut n = 2;
        loop {
            let candidate = format!("{stem}-{n}{ext}");
            if self.names.insert(candidate.clone()) {
                return candidate;
            }
            n += 1;
        }
    }

    /// Finishes the archive and renames it to its destination.
    pub fn finish(self) -> io::Result<PathBuf> {
        let tmp = self.tmp.clone();
        let done = (|| {
            let gz = self.tar.into_inner()?;
            let mut buf = gz.finish()?;
            buf.flush()?;
            let file = buf.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            std::fs::rename(&tmp, &self.dest)?;
            Ok(self.dest)
        })();
        if done.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        done
    }

    /// Gives up: the temporary file is removed, the destination untouched.
    pub fn abandon(self) {
        let _ = std::fs::remove_file(&self.tmp);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::redact::RedactConfig;
    use std::io::Read;

    fn entries(path: &Path) -> Vec<(String, String)> {
        let gz = flate2::read::GzDecoder::new(File::open(path).unwrap());
        let mut ar = tar::Archive::new(gz);
        let mut out = Vec::new();
        for e in ar.entries().unwrap() {
            let mut e = e.unwrap();
            let name = e.path().unwrap().to_string_lossy().into_owned();
            let mut s = String::new();
            e.read_to_string(&mut s).unwrap();
            out.push((name, s));
        }
        out
    }

    #[test]
    fn written_whole_then_renamed_with_unique_names() {
        let tmp = crate::spill::TempDir::new().unwrap();
        let d = tmp.path();
        let dest = d.join("b.tar.gz");
        let mut w = Writer::create(&dest, "root", 0, None).unwrap();
        assert_eq!(w.add("a/x.log", b"one\n").unwrap(), "a/x.log");
        assert!(
            !dest.exists(),
            "nothing under the final name before the end"
        );
        assert_eq!(w.add("a/x.log", b"two\n").unwrap(), "a/x-2.log");
        w.finish().unwrap();
        let got = entries(&dest);
        assert_eq!(
            got,
            vec![
                ("root/a/x.log".to_string(), "one\n".to_string()),
                ("root/a/x-2.log".to_string(), "two\n".to_string())
            ]
        );
        assert_eq!(
            std::fs::read_dir(d).unwrap().count(),
            1,
            "no temporary file left"
        );
    }

    #[test]
    fn abandoned_leaves_nothing() {
        let tmp = crate::spill::TempDir::new().unwrap();
        let d = tmp.path();
        let dest = d.join("b.tar.gz");
        let mut w = Writer::create(&dest, "root", 0, None).unwrap();
        w.add("x.log", b"one\n").unwrap();
        w.abandon();
        assert_eq!(std::fs::read_dir(d).unwrap().count(), 0);
    }

    #[test]
    fn redacted_before_written() {
        let tmp = crate::spill::TempDir::new().unwrap();
        let d = tmp.path();
        let dest = d.join("b.tar.gz");
        let r = Redactor::new(RedactConfig { hosts: false });
        let mut w = Writer::create(&dest, "root", 0, Some(r)).unwrap();
        w.add(
            "x.log",
            b"ok line\nAuthorization: Bearer abcdefghijklmnop0123456789\n",
        )
        .unwrap();
        w.finish().unwrap();
        let got = entries(&dest);
        assert!(got[0].1.starts_with("ok line\n"));
        assert!(
            !got[0].1.contains("abcdefghijklmnop0123456789"),
            "{}",
            got[0].1
        );
        assert!(got[0].1.contains(crate::redact::MASK));
    }
}
