//! A reminder a length ahead of the item the clause before puts down or names ("周五晚上7点和老婆
//! 看电影，提前一小时提醒我出门", "dentist friday 3pm, remind me an hour before"): the item it hangs
//! on is the one before, which the context fills in.

use super::{Rule, body, create::create_frame, create::is_length_word};
use crate::{
    frame::{Anchor, Frame, NewItem, Role, Selector},
    lexicon::{Action, Category, Glue, Kind},
    reader::Reader,
    title::Shape,
};

pub const REMIND_AHEAD: Rule = Rule {
    name: "create.remind_ahead",
    reads: "a reminder a length ahead of the item before it: 提前<length>提醒我(X), 'remind me <length> before/ahead (to X)'",
    examples: &["周五晚上7点和老婆看电影，提前一小时提醒我出门", "明天下午3点开会，提前半小时提醒我", "dentist friday 3pm, remind me an hour before", "flight sunday 9am, remind me 3 hours ahead to leave"],
    read: ahead,
};

fn ahead(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    let v = range.clone().find(|&i| r.is_verb(i, Action::Remind))?;
    let at = range.clone().find(|&i| r.is(i, Category::Prepare) || r.is_glue(i, Glue::Ahead))?;
    // The length stands right after 提前 or right before "before"/"ahead".
    let english = r.text(at).is_ascii();
    let length = if english {
        let start = (range.start..at).rev().take_while(|&i| i > v && is_length_word(r, i)).last()?;
        start..at
    } else {
        let end = (at + 1..range.end).take_while(|&i| is_length_word(r, i)).last()? + 1;
        at + 1..end
    };
    let text = r.sentence.slice(r.token(length.start).start, r.token(length.end - 1).end);
    quickact_time::resolve(&text, r.ctx).filter(|res| res.duration_minutes.is_some() && res.start_time.is_none())?;
    // "remind me an hour before the dentist" names its item: create.anchored reads it.
    if english && (at + 1..range.end).any(|i| !r.is_noise(i) && !r.is_glue(i, Glue::AheadTail)) && !(at + 1..range.end).any(|i| r.is_glue(i, Glue::To)) {
        return None;
    }
    r.set(v, Role::Action);
    r.set(at, Role::Anchor);
    r.set_range(length, Role::Length);
    let mut after_verb = v + 1;
    while after_verb < range.end && (r.is_glue(after_verb, Glue::ToMe) || r.is_noise(after_verb)) {
        r.set(after_verb, Role::Noise);
        after_verb += 1;
    }
    for i in at + 1..range.end {
        if english && r.is_glue(i, Glue::To) && r.roles[i].is_none() {
            r.set(i, Role::Noise);
            break;
        }
    }
    let mut frame = create_frame(r, range, Shape { kind: Some(Kind::Reminder), verbs_in_title: true });
    // With no words of its own, the reminder is of the item before.
    let item = frame.item.get_or_insert_with(|| NewItem { kind: Kind::Reminder.as_str(), ..Default::default() });
    if item.when.is_some() {
        return None;
    }
    item.anchor = Some(Anchor { target: Selector { previous: true, ..Default::default() }, after: false, offset: Some(text) });
    Some(frame)
}
