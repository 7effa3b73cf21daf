//! What a clause asks for: one frame, with the parts of the sentence each piece came from.

use serde::Serialize;

use crate::lexicon::Kind;

/// The action of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = FrameAct))]
#[serde(rename_all = "snake_case")]
pub enum Act {
    Create,
    Move,
    Shift,
    Complete,
    Delete,
    List,
}

impl Act {
    pub fn as_str(self) -> &'static str {
        match self {
            Act::Create => "create",
            Act::Move => "move",
            Act::Shift => "shift",
            Act::Complete => "complete",
            Act::Delete => "delete",
            Act::List => "list",
        }
    }
}

/// One clause's request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Frame {
    pub act: Act,
    /// The clause it was read from, as written.
    pub text: String,
    /// Its span in the sentence (code points, end exclusive).
    pub span: (usize, usize),
    /// The named rule that read it.
    pub rule: &'static str,
    /// The item(s) acted on (move, shift, complete, delete).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<Selector>,
    /// The item to create.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<NewItem>,
    /// The new time (move) or the length to move by (shift).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<Change>,
    /// What to list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listing: Option<Listing>,
    /// Each piece of the frame and the span of the sentence it came from.
    pub parts: Vec<Part>,
}

/// The item(s) a sentence points at.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Selector {
    /// Words of the title (search terms).
    pub words: Vec<String>,
    /// The kind of item, when the words name the list ("the reminder", 待办).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
    /// The day and/or time of day the item is on, as written ("明天下午3点", "friday", "the 4:30").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// Whether `when` names a time of day (a clock time or a part of day), not only a day.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub timed: bool,
    /// The n-th of the matching items by time (1-based; negative from the end).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<i8>,
    /// Every matching item ("all", "every", 都).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub all: bool,
    /// The item's priority, when the words name it ("the p1 todo", 那个重要的).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<u8>,
    /// The words name an event ("the meeting", "lunch"): a move or deletion looks among events
    /// (a to-do "book meeting room" is no meeting).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub event: bool,
    /// A word that tells candidates apart without being needed to find them ("emailed the landlord":
    /// the one that says "email").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The item the clause before acted on ("it", "that one", 它).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub previous: bool,
}

impl Selector {
    /// Whether it says anything about which item.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty() && self.kind.is_none() && self.when.is_none() && self.position.is_none() && self.priority.is_none() && !self.previous
    }

    /// A clause that names no item ("再推迟半小时", "move it to 4") acts on the one before.
    pub fn or_previous(mut self) -> Self {
        if self.is_empty() {
            self.previous = true;
        }
        self
    }

    /// The search words as one query ("dentist appointment", "会议").
    pub fn query(&self) -> String {
        self.words.join(" ")
    }
}

/// An item to create; it serialises as the arguments of `create_item` (what it does not say is
/// left out).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct NewItem {
    pub kind: &'static str,
    pub title: String,
    /// A note the sentence adds to the item ("记得带电脑", "bring the slides").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The time as written (several expressions joined), for the tool to resolve.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// `all_day` for an event with neither a clock time nor a part of day, or a meal's part of day.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub segment: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_minutes: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<u8>,
    /// The sentence puts it on a day before today: a record of what happened.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub record: bool,
    /// A time given relative to another item ("half an hour after the standup").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor: Option<Anchor>,
}

/// "half an hour after the standup", "面试前两个小时": the item the time hangs on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Anchor {
    pub target: Selector,
    /// After the anchor's end (true) or before its start.
    pub after: bool,
    /// The length between, as written; none: right at it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<String>,
}

/// How a move changes the item's time.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// A new time as written ("晚上8点", "下周二", "friday 3pm").
    To(String),
    /// A move by a length as written, negative for earlier ("半小时", "-1 hour").
    By(String),
}

/// What a listing asks for.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Listing {
    /// The day or period as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
    /// Most important first.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub by_priority: bool,
    /// What the items are about (words of their title or note).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// `completed` for what is done; open otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub completed: bool,
    /// How many the sentence asks for ("前3个", "top 5", "the first").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// It asks how many (the answer counts them).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub count: bool,
    /// It asks whether the user is free then ("am I free at 3"): what is at that time.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub free: bool,
    /// Only what is still to come ("what's next", "how many are left this week").
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub from_now: bool,
}

/// A piece of a frame and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Part {
    pub role: Role,
    /// Code points of the sentence, end exclusive.
    pub span: (usize, usize),
    pub text: String,
}

/// What a span of the sentence is in its frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = PartRole))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The word that says what to do.
    Action,
    /// Words naming the item acted on.
    Target,
    /// The time that picks out the item acted on.
    TargetTime,
    /// The title of a new item.
    Title,
    /// When a new item is.
    When,
    /// The new time of a move.
    NewTime,
    /// The length of a shift.
    Shift,
    /// The length of a new item.
    Length,
    /// Priority.
    Priority,
    /// The kind of item ("reminder", 待办).
    Kind,
    /// A note on the new item.
    Note,
    /// Which of several ("the second", 第一个) or all of them.
    Position,
    /// What a listing is about, its day, its filters.
    Filter,
    /// The item another one's time hangs on.
    Anchor,
    /// Words that carry no request (fillers, greetings, politeness, small words).
    Noise,
}
