//! TODO: the serve format.

use crate::parse::ParseOutput;

pub fn parse(input: &[u8], out: &mut ParseOutput) {
    super::generic::parse(input, out);
}
