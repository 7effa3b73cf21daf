//! Chinese connectors (到, 至, 从, 由) and glue (的, 又, 零, 开始, 持续): what joins the pieces of an
//! expression.

use crate::text::Text;
use crate::types::{
    Atom, Best, Conn, Glue, Prefix,
};

pub(super) const DUR_GLUE_WORDS: &[&str] = &["开始", "持续", "历时", "为期", "时长"];

/// Connectors (到, 至, 从) and glue (的, 又, 开始, 持续).
#[inline]
pub(super) fn words(t: &Text, i: usize, best: &mut Best) {
    match t.at(i) {
        '到' | '至' => best.offer(i + 1, Atom::Conn(Conn::To)),
        '从' => best.offer(i + 1, Atom::Prefix(Prefix::From)),
        '由' if t.at(i + 1) != '于' => best.offer(i + 1, Atom::Prefix(Prefix::From)),
        '的' => best.offer(i + 1, Atom::Glue(Glue::Soft)),
        '又' | '零' => best.offer(i + 1, Atom::Glue(Glue::Plus)),
        _ => {}
    }
    for p in DUR_GLUE_WORDS {
        if let Some(e) = t.lit(i, p) {
            best.offer(e, Atom::Glue(Glue::Dur));
        }
    }
}
