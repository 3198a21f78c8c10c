//! TODO: the kube_object format.

use crate::parse::ParseOutput;

pub fn parse(input: &[u8], out: &mut ParseOutput) {
    super::generic::parse(input, out);
}
