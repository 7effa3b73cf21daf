//! Two items named in one clause and joined by "and" (和, 跟): "bought milk and eggs",
//! "把买猫粮和换猫砂都勾掉", "cancel yoga and pilates tomorrow". The clause's action is done to each:
//! its frame becomes one frame per item, each with the time the clause gave (都 and "both" say
//! both, not every match).

use crate::{
    frame::{Act, Frame, Role},
    lexicon::Category,
    reader::Reader,
    target,
};

/// The frames of `frame`, read from `r`: one per item its target joins with "and", or the frame.
pub fn split(r: &Reader, frame: Frame) -> Vec<Frame> {
    let acts_on_items = matches!(frame.act, Act::Complete | Act::Delete | Act::Move | Act::Shift);
    let Some(target) = frame.target.as_ref().filter(|t| acts_on_items && !t.previous && t.position.is_none()) else { return vec![frame] };
    let words: Vec<usize> = (0..r.len()).filter(|&i| r.roles[i] == Some(Role::Target)).collect();
    let (Some(&first), Some(&last)) = (words.first(), words.last()) else { return vec![frame] };
    let joins: Vec<usize> = (first..last).filter(|&i| r.is(i, Category::And) && r.roles[i] != Some(Role::Target)).collect();
    let [and] = joins[..] else { return vec![frame] };
    // "the meeting with Sam and Ana" is one meeting: "and" goes on with whom.
    if (first..and).any(|i| r.is_glue(i, crate::lexicon::Glue::AboutMarker) && r.text(i).is_ascii()) {
        return vec![frame];
    }
    let when = target.when.clone();
    let mut sides = Vec::new();
    for range in [first..and, and + 1..last + 1] {
        let mut side = r.clone();
        side.doubts.clear();
        range.clone().for_each(|i| side.roles[i] = None);
        let mut selector = target::selector(&mut side, range);
        if !side.doubts.is_empty() || selector.words.is_empty() {
            return vec![frame];
        }
        selector.when = selector.when.or(when.clone());
        selector.timed |= target.timed;
        selector.kind = selector.kind.or(target.kind);
        selector.event |= target.event;
        sides.push(selector);
    }
    sides.into_iter().map(|selector| Frame { target: Some(selector), ..frame.clone() }).collect()
}
