//! The sentences of verdicts the backend writes, in both languages: the local provider's (it
//! plays the model), the engine's own (a time limit, a cancel, a run given up, a model that cannot
//! be used), the `finish` tool's fallbacks and the undo's.

use super::Language;

/// The sentences of one language.
#[derive(Debug, Clone, Copy)]
pub struct Replies(pub Language);

/// What an action did to an item, for the sentence that reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Done {
    Created,
    Completed,
    Deleted,
    Moved,
}

/// What an undo did to an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reverted {
    /// Taken away (an item the task created, or one it brought back).
    Removed,
    /// Back after the task deleted it.
    BroughtBack,
    /// Its earlier values again.
    Restored,
}

impl Replies {
    fn pick(&self, zh: &str, en: &str) -> String {
        self.0.pick(zh, en).to_owned()
    }

    // --- what an action did --------------------------------------------------------------------

    /// `已创建：<item>` / `Created: <item>`.
    pub fn done(&self, done: Done, item: &str) -> String {
        let (zh, en) = match done {
            Done::Created => ("已创建", "Created"),
            Done::Completed => ("已完成", "Marked as done"),
            Done::Deleted => ("已删除", "Deleted"),
            Done::Moved => ("已改期", "Rescheduled"),
        };
        match self.0 {
            Language::Chinese => format!("{zh}：{item}"),
            Language::English => format!("{en}: {item}"),
        }
    }

    pub fn default_duration(&self) -> String {
        self.pick("未说明结束时间，按默认时长安排", "No end time was given, so the default duration applies")
    }

    /// What a listing found: a count, then the items' lines (`lines`: already joined).
    pub fn listed(&self, count: usize, lines: &str) -> String {
        match (self.0, count) {
            (Language::Chinese, 0) => "没有找到符合条件的事项。".into(),
            (Language::Chinese, n) => format!("找到{n}项：{lines}。"),
            (Language::English, 0) => "Nothing found.".into(),
            (Language::English, 1) => format!("Found 1 item: {lines}."),
            (Language::English, n) => format!("Found {n} items: {lines}."),
        }
    }

    pub fn not_found(&self, query: &str) -> String {
        match self.0 {
            Language::Chinese => format!("没有找到与“{query}”匹配的事项，没有做任何修改。"),
            Language::English => format!("No item matches \"{query}\", so nothing was changed."),
        }
    }

    pub fn check_title(&self) -> String {
        self.pick("请检查事项名称，或使用完整标题再试一次。", "Check the item's title, or use its full title.")
    }

    pub fn several(&self, n: usize, query: &str) -> String {
        match self.0 {
            Language::Chinese => format!("找到{n}个与“{query}”匹配的事项，请说明是哪一个。"),
            Language::English => format!("{n} items match \"{query}\". Which one do you mean?"),
        }
    }

    /// The words found nothing, but the day, time or kind the sentence gave found these.
    pub fn not_found_but_nearby(&self, query: &str) -> String {
        match self.0 {
            Language::Chinese => format!("没有找到与“{query}”匹配的事项；那个时间有这些，是其中一个吗？"),
            Language::English => format!("No item matches \"{query}\"; these are there at that time. Is it one of them?"),
        }
    }

    /// The item another one's time hangs on has no time of day.
    pub fn no_time_to_hang_on(&self, title: &str) -> String {
        match self.0 {
            Language::Chinese => format!("“{title}”没有具体时间，算不出新事项的时间，没有做任何修改。"),
            Language::English => format!("\"{title}\" has no time of day to count from, so nothing was changed."),
        }
    }

    /// Too many items for one sentence to act on at once.
    pub fn too_many(&self, n: usize) -> String {
        match self.0 {
            Language::Chinese => format!("有{n}个事项符合，一次最多处理20个，没有做任何修改。"),
            Language::English => format!("{n} items match; one request acts on at most 20, so nothing was changed."),
        }
    }

    pub fn be_precise(&self) -> String {
        self.pick("加上日期或完整标题，例如“删除2月8日的项目会议”。", "Add the date or the full title, e.g. \"delete the team meeting on Feb 8\".")
    }

    pub fn passed(&self) -> String {
        self.pick("这个时间已经过去了，没有写入。", "That time has already passed, so nothing was written.")
    }

    /// The next occurrence of a passed time, as a suggestion (`when`: in words).
    pub fn try_next(&self, when: &str) -> String {
        match self.0 {
            Language::Chinese => format!("如果是指{when}，请再说一次并写明日期。"),
            Language::English => format!("If you mean {when}, say so with the date."),
        }
    }

    pub fn future_date(&self) -> String {
        self.pick("请给出一个将来的日期。", "Give a date in the future.")
    }

    /// An overlap with `titles` (already joined as a list).
    pub fn conflict(&self, titles: &str) -> String {
        match self.0 {
            Language::Chinese => format!("与已有日程冲突：{titles}，没有创建。"),
            Language::English => format!("It overlaps {titles}, so nothing was written."),
        }
    }

    pub fn another_time(&self) -> String {
        self.pick("换一个时间，或说明“冲突也要添加”。", "Pick another time, or say to add it anyway.")
    }

    /// A tool refused or failed. The tool's own words are written for a model, in English: a
    /// Chinese answer keeps only the user's words they quote (what could not be read), and the
    /// rest stays in the journal.
    pub fn failed(&self, error: &str) -> String {
        match (self.0, quoted_piece(error)) {
            (Language::Chinese, Some(piece)) => format!("操作没有完成：无法处理“{piece}”，没有做任何修改。"),
            (Language::Chinese, None) => "操作没有完成，没有做任何修改。".into(),
            (Language::English, _) => format!("The action could not be done: {error}"),
        }
    }

    pub fn rephrase(&self) -> String {
        self.pick(
            "请换一种说法，一句话说明一件事，例如“明天下午3点开会”“完成报告提交”“把会议改到周五上午10点”；复杂的请求需要配置模型（OPENAI_API_KEY）。",
            "Rephrase it as one action, e.g. \"meeting tomorrow 3pm\", \"mark buy milk as done\", \"move the dentist appointment to Friday 10am\"; for anything more, configure a model (OPENAI_API_KEY).",
        )
    }

    /// A reply to a which-item question that names no single option: what it was, and how to answer.
    pub fn reply_names_no_option(&self, options: usize) -> (String, String) {
        match self.0 {
            Language::Chinese => ("没能从这个回答看出是哪一项，没有做任何修改。".to_owned(), format!("请回复选项的编号（1到{options}），例如“2”或“第二个”。")),
            Language::English => (
                "I could not tell which option this reply means, so nothing was changed.".to_owned(),
                format!("Reply with the option's number (1 to {options}), e.g. \"2\" or \"the second one\"."),
            ),
        }
    }

    /// A reply to a conflict or a passed time that says neither a new time nor to go ahead.
    pub fn reply_names_no_change(&self) -> (String, String) {
        (
            self.pick("没能理解这个回答，没有做任何修改。", "I could not read this reply, so nothing was changed."),
            self.pick("请给出新的时间（例如“改到明天下午4点”），或说“冲突也要添加”。", "Give a new time (e.g. \"tomorrow at 4pm instead\"), or say to add it anyway."),
        )
    }

    /// A request that says nothing to do ("帮我安排一下"): the question back.
    pub fn what_to_add(&self) -> String {
        self.pick("要安排什么事？这句话没有说明事项，没有做任何修改。", "What should I put down? The sentence does not say what, so nothing was changed.")
    }

    pub fn say_what_and_when(&self) -> String {
        self.pick(
            "请说明要做什么和什么时候，例如“明天下午3点开会”或“提醒我周五交报告”。",
            "Say what and when, e.g. \"meeting tomorrow at 3pm\" or \"remind me to pay rent on friday\".",
        )
    }

    pub fn not_understood(&self) -> String {
        self.pick("没能理解这句话，没有做任何修改。", "I could not read this sentence as an action, so nothing was changed.")
    }

    /// The words a sentence was not read for: it was not acted on.
    pub fn not_read(&self, words: &[String]) -> String {
        let quoted: Vec<String> = words.iter().map(|w| self.pick(&format!("“{w}”"), &format!("\"{w}\""))).collect();
        match self.0 {
            Language::Chinese => format!("没能读懂{}，没有做任何修改。", quoted.join("、")),
            Language::English => format!("I could not read {}, so nothing was changed.", Language::English.join_list(&quoted)),
        }
    }

    /// A sentence with no request in it (a greeting, thanks).
    pub fn no_request(&self) -> String {
        self.pick("你好！没有要做的事，没有做任何修改。", "Hello! There was nothing to do, so nothing was changed.")
    }

    // --- the engine's own endings --------------------------------------------------------------

    pub fn timed_out(&self, seconds: i32) -> (String, String) {
        match self.0 {
            Language::Chinese => (format!("任务没有在{seconds}秒的时限内完成。"), "请再试一次，或放宽时限。".into()),
            Language::English => (
                format!("The task did not finish within its time limit of {seconds} seconds."),
                "Try again, or allow a longer timeout.".into(),
            ),
        }
    }

    pub fn cancelled(&self) -> (String, String) {
        (
            self.pick("任务在完成前被取消了。", "The task was cancelled before it finished."),
            self.pick("如果仍然需要，请再提交一次这句话。", "Submit the sentence again if you still want it done."),
        )
    }

    /// Every attempt failed. The last failure is a system's words (English): a Chinese answer
    /// leaves them out (the log has them).
    pub fn gave_up(&self, attempts: i32, last_failure: &str) -> (String, String) {
        match self.0 {
            Language::Chinese => (format!("任务尝试了{attempts}次，每次都失败了，没有完成。"), "请稍后再试，或换一种说法。".into()),
            Language::English => (
                format!("The task was attempted {attempts} times and failed every time; the last failure: {last_failure}."),
                "Try again later, or rephrase the sentence.".into(),
            ),
        }
    }

    /// The model could not be reached (`transient`) or refused the service's settings.
    pub fn model_unusable(&self, transient: bool) -> (String, String) {
        if transient {
            (
                self.pick("助手现在繁忙或无法连接，操作没有完成。", "The assistant is busy or cannot be reached right now, so the action was not completed."),
                self.pick("请一分钟后再试。", "Try again in a minute."),
            )
        } else {
            (
                self.pick("助手不可用：服务的模型设置被拒绝了。", "The assistant is not available: the service's model settings were refused."),
                self.pick("请联系管理员检查模型配置。", "Ask the administrator to check the model configuration."),
            )
        }
    }

    /// The model answered in text twice instead of acting (`text`: its words, quoted as they are).
    pub fn answered_without_acting(&self, text: &str) -> (String, String) {
        match self.0 {
            Language::Chinese => (format!("助手只回复了文字，没有完成操作：{text}"), "请换一种说法，一句话说明一件具体的事，例如“明天下午3点开会”。".into()),
            Language::English => (
                format!("The assistant answered without completing the action: {text}"),
                "Rephrase the request as one concrete action, e.g. \"meeting tomorrow at 3pm\".".into(),
            ),
        }
    }

    pub fn too_many_turns(&self, turns: usize) -> (String, String) {
        match self.0 {
            Language::Chinese => (format!("在{turns}轮模型调用内没能完成操作。"), "请把请求拆成几句简单的话，每句一件事。".into()),
            Language::English => (
                format!("The action could not be completed within {turns} model turns."),
                "Split the request into simpler sentences, one action each.".into(),
            ),
        }
    }

    /// An external tool failed along the way (`why`: its error, as it came).
    pub fn external_tool_failed(&self, tool: &str, why: &str) -> String {
        match self.0 {
            Language::Chinese => format!("外部工具 {tool} 出错了。"),
            Language::English => format!("The external tool {tool} failed: {why}"),
        }
    }

    // --- `finish` fallbacks --------------------------------------------------------------------

    /// A clarification's suggestion when the model gave none.
    pub fn name_it_precisely(&self) -> String {
        self.pick("请更准确地说明是哪一项（日期、时间或完整标题）。", "Name the item more precisely (its date, time or full title).")
    }

    /// An error's suggestion when the model gave none.
    pub fn rephrase_with_details(&self) -> String {
        self.pick("请换一种说法，写明事项名称和确切的日期或时间。", "Rephrase the request with the item's title and an exact date or time.")
    }

    /// The suggestion of one action of several that was not done, when the model gave none.
    pub fn say_action_again(&self) -> String {
        self.pick("请把这件事单独再说一次，写明事项名称和确切的时间。", "Say this action again on its own, with the item's title and an exact time.")
    }

    // --- undo ----------------------------------------------------------------------------------

    /// One item an undo put back (`title` as stored).
    pub fn reverted(&self, reverted: Reverted, title: &str) -> String {
        match (self.0, reverted) {
            (Language::Chinese, Reverted::Removed) => format!("移除了“{title}”"),
            (Language::Chinese, Reverted::BroughtBack) => format!("恢复了已删除的“{title}”"),
            (Language::Chinese, Reverted::Restored) => format!("“{title}”恢复为原来的样子"),
            (Language::English, Reverted::Removed) => format!("removed \"{title}\""),
            (Language::English, Reverted::BroughtBack) => format!("brought back \"{title}\""),
            (Language::English, Reverted::Restored) => format!("restored \"{title}\""),
        }
    }

    /// An undo refused: the task has not finished (`status`: `pending` or `processing`).
    pub fn undo_not_finished(&self, status: &str) -> String {
        match self.0 {
            Language::Chinese => {
                let status = match status {
                    "pending" => "排队中",
                    "processing" => "处理中",
                    other => other,
                };
                format!("这个任务还在{status}，请先取消它或等它完成。")
            }
            Language::English => format!("the task is still {status}; cancel it or wait for it to finish first"),
        }
    }

    /// An undo refused: the task changed no item.
    pub fn nothing_to_undo(&self) -> String {
        self.pick("这个任务没有改动任何事项，没有可撤销的内容。", "the task changed no item")
    }

    /// An undo refused: undone already by task `undo`.
    pub fn already_undone(&self, undo: &str) -> String {
        match self.0 {
            Language::Chinese => format!("这个任务已经被撤销过了（撤销任务 {undo}）。"),
            Language::English => format!("the task was already undone by task {undo}"),
        }
    }

    /// An undo refused: these items (titles) changed again after the task.
    pub fn changed_since(&self, titles: &[String]) -> String {
        match self.0 {
            Language::Chinese => {
                let titles: Vec<String> = titles.iter().map(|t| format!("“{t}”")).collect();
                format!("无法撤销：{}在这个任务之后又被修改过，撤销会覆盖那次修改。", self.0.join_list(&titles))
            }
            Language::English => format!(
                "cannot undo: {} changed again after this task; undoing would overwrite that change",
                titles.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(", ")
            ),
        }
    }

    /// An undo refused: bringing deleted items back would pass the limit of `max` items.
    pub fn undo_over_quota(&self, max: u32) -> String {
        match self.0 {
            Language::Chinese => format!("撤销会恢复已删除的事项，超过你{max}项的上限；请先删除一些。"),
            Language::English => format!("undoing would bring back deleted items past your limit of {max} items; delete some first"),
        }
    }

    /// The undo of the task of `sentence`, which did `done` (each from [`Replies::reverted`]).
    pub fn undid(&self, sentence: &str, done: &[String]) -> String {
        if done.is_empty() {
            return self.pick(
                "没有需要撤销的内容：这个任务对事项的修改已经相互抵消。",
                "Nothing was left to undo: the task's only item changes cancelled each other out.",
            );
        }
        match self.0 {
            Language::Chinese => format!("已撤销“{sentence}”：{}。", done.join("；")),
            Language::English => format!("Undid \"{sentence}\": {}.", done.join("; ")),
        }
    }
}

/// The first piece of the user's words a tool error quotes (`"99999年1月1日"`): a quoted text
/// with a Chinese character (an id or a field name is not the user's).
fn quoted_piece(error: &str) -> Option<&str> {
    error.split('"').skip(1).step_by(2).find(|piece| quickact_time::is_chinese(piece))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn latin_words(text: &str) -> Vec<&str> {
        text.split(|c: char| !c.is_ascii_alphabetic()).filter(|w| w.len() > 1).collect()
    }

    #[test]
    fn chinese_replies_have_no_english_words() {
        let say = Replies(Language::Chinese);
        let texts = [
            say.done(Done::Completed, "周五（2月13日）交报告"),
            say.listed(2, "A；B"),
            say.not_found("周会"),
            say.several(2, "周会"),
            say.passed(),
            say.conflict("周会"),
            say.failed("item 1 no longer exists"),
            say.not_understood(),
            say.timed_out(30).0,
            say.cancelled().0,
            say.gave_up(3, "database error").0,
            say.model_unusable(true).0,
            say.too_many_turns(10).0,
            say.name_it_precisely(),
            say.rephrase_with_details(),
            say.undid("明天开会", &[say.reverted(Reverted::Removed, "开会")]),
            say.undid("明天开会", &[]),
            say.undo_not_finished("processing"),
            say.nothing_to_undo(),
            say.changed_since(&["周会".into(), "周报".into()]),
            say.undo_over_quota(500),
        ];
        for text in texts {
            assert!(latin_words(&text).is_empty(), "{text}");
        }
    }

    #[test]
    fn english_replies_have_no_chinese() {
        let say = Replies(Language::English);
        let texts = [
            say.done(Done::Deleted, "\"lunch\" Friday (Feb 13)"),
            say.listed(1, "\"lunch\""),
            say.timed_out(30).0,
            say.cancelled().1,
            say.undid("lunch friday", &[say.reverted(Reverted::BroughtBack, "lunch")]),
            say.answered_without_acting("sure").1,
        ];
        for text in texts {
            assert!(!quickact_time::is_chinese(&text), "{text}");
        }
    }

    #[test]
    fn a_chinese_failure_keeps_the_users_words_it_could_not_read() {
        let say = Replies(Language::Chinese);
        let error = "\"99999年1月1日\" in the sentence is not a date or time that can be read (out of range); nothing was written";
        assert_eq!(say.failed(error), "操作没有完成：无法处理“99999年1月1日”，没有做任何修改。");
        assert_eq!(say.failed("item 0a1b no longer exists"), "操作没有完成，没有做任何修改。");
    }

    #[test]
    fn a_listing_names_what_it_found_and_does_not_end_in_a_colon() {
        assert_eq!(Replies(Language::Chinese).listed(3, "A、B、C"), "找到3项：A、B、C。");
        assert_eq!(Replies(Language::English).listed(2, "A; B"), "Found 2 items: A; B.");
        assert_eq!(Replies(Language::English).listed(0, ""), "Nothing found.");
    }
}
