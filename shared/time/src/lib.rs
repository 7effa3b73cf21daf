//! quickact-time: the deterministic time-expression resolver for Chinese and English.
//!
//! Pure code, no I/O, no global state. Two entry points, and the vocabulary for a reader:
//! - [`find_all`] finds every time expression in free text ("明天下午3点到4点开会",
//!   "move my dentist appointment to Friday 10am"), left to right, non-overlapping, each maximal.
//! - [`resolve`] reads a tool argument that is meant to be one time expression as a whole
//!   ("明天下午3点", "next friday 3pm", "2026-03-05", "15:30") and returns the combined resolution.
//! - [`time_word_spans`] lists every word of the resolver's vocabulary in a text, matched or not.
//!
//! Spans are counted in Unicode code points of the original text. Internally every character is
//! normalised one-to-one (full-width digits, letters and punctuation to ASCII, ASCII to lower case,
//! a few traditional characters such as 後 週 點 時 號 個 禮 鐘 兩 倆 兒 這 節 國 to simplified, ’ to
//! '), so spans map straight back to the original; a corrected typo ("thrusday") keeps a map of its
//! own back to the original code points.
//!
//! Chinese numbers may be written in digits, numerals or the colloquial 俩 (= 两个, two) and 仨
//! (= 三个, three), wherever a number stands: "俩点" = 2 o'clock, "仨小时" = 3 hours, "俩天后",
//! "过仨礼拜", "每俩小时". After a pronoun or a word for people they count the people and are no
//! number ("我们俩", "咱俩周末", "哥儿俩", "他们仨").
//!
//! # Layout
//! The pipeline runs top to bottom; each module depends only on the ones above it.
//! - `typos`: the day, month and part-of-day names a misspelt word stands for.
//! - `text`: the normalised input (one char per original code point, typos corrected) and matching
//!   helpers.
//! - `numerals`: numbers in digits, Chinese numerals and English words.
//! - `dates`: calendar arithmetic (month lengths, Monday-start weeks, next weekday).
//! - `segment`: parts of the day ([`Segment`]).
//! - `types`: the atoms the lexers produce.
//! - `holidays`: how a holiday's date is found; Easter and the lunar festivals (春节, 中秋 ...).
//! - `digits`, `zh`, `en`: the lexers (digit forms shared by both languages, Chinese, English).
//! - `lexer`: runs the three lexers, longest candidate first; joins a length and an offset.
//! - `lexicon`: every word of the vocabulary in a text ([`time_word_spans`]).
//! - `grammar`: combines adjacent atoms into expressions (points, ranges, durations).
//! - `clauses`: joins the expressions of one clause (a duration a few words away, the time of a
//!   list of days, a day and its hour across a meal).
//! - `recurrence`: RRULE text and first occurrences.
//! - `resolve`: expressions to [`Resolution`]s (clock minutes, date parts, ranges).
//!
//! `tests/time_table.rs` holds the table of readings (`tests/data/*.tsv`, one file per family),
//! `benches/time_resolver.rs` measures expressions per second, and `examples/time_eval.rs` scores
//! the resolver on the peer corpus (`../shared/eval/time-expressions.jsonl`).
//!
//! # Readings (the rules the resolver applies)
//!
//! All dates are calendar dates in the context's time zone; weeks start on Monday.
//!
//! * **Relative days**: 今天/今日/本日 = reference date, 明天/明日/聽日 +1, 后天 +2, 大后天 +3,
//!   大大后天 +4, 昨天/昨日/尋日/琴日 -1, 前天 -2, 大前天 -3; the northern colloquial 今儿, 明儿,
//!   后儿, 大后儿, 昨儿, 前儿, 大前儿 (also with 个: 明儿个, and 今个儿, 明个儿, 昨个儿), where
//!   前儿/后儿 after a place word are places (跟前儿, 门后儿); two days at once, 明后天/明后两天
//!   (tomorrow and the day after) and 今明两天 (today and tomorrow), are a span (`date`..`end_date`,
//!   also with a part of day: 明后天下午); today/tomorrow/yesterday, the day after tomorrow, the
//!   day before yesterday. 次日/翌日/第二天 = the day after the date
//!   the expression is anchored to (the start of a range), else tomorrow.
//! * **Weekdays**: a bare weekday (周三, 星期天, friday) is the next occurrence, today included;
//!   when it is today and an attached clock time or part of day has already passed, it is the
//!   same weekday of next week. 本周X/这周X/this X/X of this week = X of the current Monday-start
//!   week (possibly in the past), except English "this X" said on a Sunday: that week has no day
//!   left but the Sunday, and an English speaker (whose week often starts on Sunday) means the
//!   coming X ("this saturday" on Sunday 7 August = 13 August; 这周六 stays 6 August).
//!   下周X/下个星期X/next X/X of next week = X in the next Monday-start week (so on a Tuesday
//!   "下周一"/"next monday" is 6 days away, "next wednesday" 8 days away).
//!   上周X/last X = previous week; 下下周X = two weeks on; "X after next" = next occurrence + 7 days.
//! * **Weekend**: 周末/this weekend/the weekend = the **Saturday** (a single date, grain day) of the
//!   current week, or of the next/last week with 下/上/next/last ("this past weekend" = last
//!   week's); bare 周末 said on a Sunday means the coming Saturday. Both its days, 周末两天,
//!   下周末这两天, "all weekend", "the whole weekend", are Saturday..Sunday (`end_date`).
//! * **Lists of days** share the time said once for them, each day its own match: "monday and
//!   wednesday at 3" (both 15:00), "周一和周三下午三点", "明天或后天下午两点", "at 9 on thursday and
//!   friday", "mon, wed and fri at 10am", and with spaces only when one name is no ordinary word
//!   ("gym mon wed fri"; not "mon wed", "the sun sat"); "mon-wed" is a range. A range of weekdays
//!   with one hour, "周一到周五上午九点", "monday to friday at 9am", is that hour each day: the first
//!   day at the hour, `end_date` the last day, `rrule` FREQ=DAILY;COUNT=<days>; so is any range of
//!   days with 每天/"every day" before the hour (3月5日到3月7日每天下午3点). Dates with an hour alone,
//!   "5号到7号下午3点", stay apart: the hour may be when the stay ends. A recurring weekend (每周末, every weekend) is BYDAY=SA,SU.
//! * **Dates**: 3月5日, 三月五号, 2026年3月2日, 15年3月2日 (two-digit years are 20xx unless that is more
//!   than 20 years ahead), 3/5 and 4/25 (month/day), 2026-03-05, 2026/3/5, 6·30, 09-01;
//!   March 5, 5 March, Mar 5th, Feb 8 2026, the 5th. A date without a year is the next one that has not
//!   passed (today counts); a day of month alone (8号, the 8th) likewise. A weekday written with a
//!   yearless date ("Fri, Jul 18") picks the nearest year in which the weekday matches.
//!   Numbers with a 4-digit year at the end (24.12.2027, 24-12-2027, 25/12/2027, 4/25/2026): a
//!   part over 12 is the day; when either could be the month, dots and dashes put the day first
//!   and slashes the month first (US order), with `confidence` `inferred`. Year,
//!   month and day separated by single spaces need two digits each (2027 03 15). Two slashed parts
//!   are month/day unless the first is over 12 (25/4 = 25 April). 17-Sep-2027, Sep-17-2027,
//!   "9 october in 2027", years in words ("march second twenty twenty seven", "two thousand
//!   twenty seven"), 二零二七年三月九日. A relative year with a relative month keeps that
//!   year: 明年本月五号 = the 5th of this month next year.
//! * **Holidays** are the next one, today included, or a stated year's ("christmas 2027", 2027年中秋,
//!   明年春节, 今年元旦): fixed dates (元旦, 情人节, 劳动节/五一, 国庆, 圣诞节, new year's eve, valentine's day,
//!   halloween, christmas eve, boxing day), an n-th weekday of a month (thanksgiving, mother's day, 母亲节,
//!   father's day, labor day, memorial day, MLK day) and moving ones: Easter (good friday, easter
//!   monday) and the lunar festivals, from the tables of `chinese-lunisolar-calendar` (春节/农历新年/
//!   chinese new year, 除夕/大年三十, 元宵, 端午, 七夕, 中秋/mid-autumn festival, 重阳, 腊八); 除夕 is the eve
//!   of that year's 春节. Traditional spellings are read (聖誕節, 中秋節, 國慶日).
//! * **Ordinals**: day ordinals in digits or words (the 5th, the twenty-second, march second,
//!   second of june; "the second" in words only after a weekday or "on", or before "of <month>",
//!   so "the second meeting" is no date). The n-th weekday of a month: "the third Wednesday of next
//!   month", "first friday in june", "last Friday of this month", "the second to last friday of
//!   the month", "the first monday next month" (no "of" before a relative month), the possessive
//!   "this month's last Friday", "next month's second Tuesday", "june's first monday",
//!   下个月的第三个周三, 本月最后一个周一, 倒数第二个周五 (second to last), 下个月头一个周一 (the first)
//!   (a month is required in English, where "last friday" alone is last week's; in Chinese a bare
//!   第3个周三 is this month's); a month named without a year whose n-th weekday has passed is next
//!   year's; a month without that weekday (a fifth Monday) gives no match. "the last/first day of
//!   <month>", "next month's last day", 下个月最后一天, 本月的第一天, 明年最后一天 = its last/first day. A
//!   day of the month after "of" or "in" a relative month belongs to that month ("the 3rd in next
//!   month"); a month name after "a"/"an"/"the" alone is no month ("an august body").
//!   **Working days** are Monday to Friday (no holiday calendar: a public holiday on a weekday still
//!   counts). The n-th working day of a month: "the first working/business day of next month",
//!   "the last business day of this month", "next month's first business day", "the 3rd workday of
//!   march", "the first weekday of next month", 下个月第一个工作日, 本月最后一个工作日, 下个月的第三个
//!   工作日; of a week: "the last working day of next week", 下周的最后一个工作日 (= its Friday). Chinese
//!   needs the month or week right before (第一个工作日 alone is no date, and 三个工作日 is a count,
//!   not "every working day"). A weekday with a day of the month ("Tuesday the 14th",
//!   14号周二) is the next such day that falls on that weekday. The n-th month of a year: "the 4th
//!   month of next year", 明年第二个月 (Chinese only right after a year: 工作的第二个月 is no date).
//!   Month words give a month-grain span: date = first day, `end_date` = last day (下个月, 三月,
//!   next month); years likewise (明年, next year); weeks (下周, next week) Monday..Sunday.
//!   月底/end of the month = the last day, 月初 = the 1st, 月中 = the 15th, 年底 = 31 December.
//!   The thirds of a month are spans (`date`..`end_date`, grain day): 上旬/"early <month>" = 1st-10th,
//!   中旬 = 11th-20th, 下旬/"late <month>" = 21st-last day (3月中旬, 下个月上旬, 本月下旬, 下旬 = this
//!   month's, "early march", "late next month", "in early april 2027").
//!   Weeks have parts too: "start/beginning of next week" = its Monday; "end of the week", "by end
//!   of next week", "eow" = its **Friday** (the end of the working week; `confidence` `inferred`,
//!   since some mean the Sunday), "middle of the week", 下周中 = its Wednesday (`inferred`). Its
//!   halves are spans (`inferred`): "early next week", "early in the week", 下周初, 这周前半周 =
//!   Monday-Wednesday; "late this week", "later in the week", 下周后半周 = Thursday-Sunday; "the
//!   rest of the week" = today to Sunday; a business week ("next business week", "this work week")
//!   its Monday to Friday. The n-th week of a month is seven days from its 1st
//!   ("the first week of april" = 1st-7th, "2nd week of may" = 8th-14th), the last week its last
//!   seven days; the halves of a month are the 1st-15th and the 16th-last day ("the first half
//!   of june", "second half of next month", 5月上半月, 下个月下半月). A year alone after
//!   in/by/since/until/during is that year ("in 2027"; not "in 2000 steps"); a year written first
//!   ("2027 Oct 2") is read as well.
//! * **Clock times**: a part-of-day word fixes AM/PM: 下午3点 = 15:00, 晚上8点 = 20:00,
//!   中午1点 = 13:00, 凌晨2点 = 02:00, 早上/上午 as written. 晚上/夜里12点 and "midnight" =
//!   00:00 at the end of the day, i.e. the **next date** at 00:00; 晚上/夜里 1-4点 are also read as the
//!   small hours after that evening. am/pm and 24-hour forms (15:30, 15点, 09:00) are taken as written.
//!   A **bare hour** (no part of day, no am/pm, 1-12): on the reference date it is the earliest of
//!   h and h+12 that has not passed yet (三点 at 04:30 -> 15:00, at 01:00 -> 03:00); if both have
//!   passed it is h+12, still on the reference date (the caller decides what to do with passed times).
//!   With an explicit date that is not the reference date, 1-6 read as PM and 7-12 as written.
//!   The same non-reference rule is used for recurrences (每天8点 = 08:00, 每天3点 = 15:00).
//!   Explicit times that have already passed also stay on the reference date (下午3点 at 16:00,
//!   "3am" at 04:30); only bare weekdays and recurrences move on (see above and below).
//!   Other clock forms: 三点儿 (colloquial 3点; 一点儿 is "a little" unless a part of day stands
//!   right before it: 下午一点儿), "7.45 pm" (a dot only with am/pm, since 3.5 is a number),
//!   "9ish", hours and minutes in words ("two in the afternoon", "seven thirty pm", "nine forty-five", "at
//!   eleven", "half six" = 6:30; words without am/pm need at/by/until/around before them or a part
//!   of day or day after them, so "two people" is no time), 8点差一刻 = 7:45, 差5分8点 = 7:55,
//!   an hour with its minutes in words needs no context word ("seven forty-five", "six thirty",
//!   "nine oh five"; not before a noun or a hyphen: "seven fifty dollars", "two thirty-page reports"),
//!   nor does an hour in words before "to/till" and a marked hour ("one to three pm" = 13-15);
//!   "twenty to seven" = 6:40 (a count of minutes that could be an hour, "ten to four", needs "at"
//!   before it, since "ten to four" may be a range), "at 8.15" (a dot after "at"), "17:30h",
//!   four digits as a 24-hour time after "at", or before "h", or before "hours" with a leading
//!   zero or "at" ("at 1730", "1945h", "0800 hours"; "worked 1500 hours" is a length). A bare hour after around/about/approximately/roughly is that hour ("around 3",
//!   "at about 10"), unless a word follows the number ("about 4 people").
//!   **Meals** decide the half of the day of a bare hour said with them (up to 5 words or 6 Han
//!   characters before it, 3 words or 5 Han characters after it, within the clause): dinner,
//!   supper, drinks, 晚饭, 晚餐 at 1-11 are in the evening ("Dinner at 7 tomorrow" = 19:00,
//!   "明天七点吃晚饭"); lunch, 午饭, 午餐, 中饭 at 1-2 after noon; breakfast, brunch, 早饭, 早餐 at 5-11
//!   in the morning. A day and its hour with a meal between them are one match whose `gap` is
//!   the meal ("明天晚饭七点" = tomorrow 19:00, "friday dinner at 8").
//!   A bare number right after a part of day is an hour of it ("tuesday afternoon 2-4" = 14-16,
//!   "tomorrow morning 9"), and so is a range of bare numbers right after a weekday or a relative
//!   day ("thursday 9-11", "tomorrow 1-3"; not "monday 3-4 people"). The end of the working day, "EOD", "COB", "EOB", "end of (the) day",
//!   "close/end of business", is 17:00 by convention (`confidence` `inferred`): "by eod",
//!   "EOD friday", "close of business tomorrow".
//! * **Ranges** (到 至 - ~ to until through, 从/from/between): one match with start and end.
//!   An unmarked end takes the earliest reading after the start (下午3点到5点 = 15-17); an end earlier
//!   than the start moves `end_date` to the next day; a PM marker or part of day on the end applies to
//!   an unmarked start when that keeps start < end ("3-4pm" = 15-16, "10 - 11 at night" = 22-23).
//!   A date written after the end ("1pm-2pm tomorrow") applies to both ends. Two neighbouring
//!   hours said together are a range too, since either may be meant: 下午两三点 = 14:00-15:00,
//!   晚上七八点 = 19:00-20:00, 十一二点 = 11:00-12:00, 凌晨一两点 (一两 only after a part of day: "有
//!   一两点建议" counts points), with `confidence` `inferred`. Date ranges
//!   (7月13日到15日, July 13-15, 周一到周五) give `date` and `end_date`; a range without a year
//!   that is going on (started, not ended) is this year's ("march 2 to 6" said on 4 March).
//! * **Offsets**: 3天后, 两周后, 半小时后, 3天前, in 3 days, 2 weeks from now, 3 days ago, a week after
//!   tomorrow; the British "friday week", "monday week" (a week after the coming one), "a week
//!   tomorrow", "a week today", "two weeks on monday" (that many weeks after the day named);
//!   half days and weeks are read to the minute ("a day and a half from now", "in 1.5 days",
//!   一天半后 = 36 hours on). **Compound offsets**: lengths written with an offset are one offset
//!   ("3 days 4 hours from now", 两天三小时后, 两周零三天后, 1小时20分钟后, "in 1 hour 30 minutes", "in 2
//!   weeks and 2 days"); whole days stay a date, anything finer is minutes from now.
//!   **Approximate offsets** are spans: 三四天后, 两三个小时以后, "in 2-3
//!   days", "in two or three hours", "3-4 days ago" (`date`..`end_date` for days and longer,
//!   `start_time`-`end_time` for hours and minutes); "a few" and 几 are two to four by convention
//!   ("in a few days", "a few weeks from now", 过几天, 几个小时后; `confidence` `inferred`). "from
//!   now" alone is no match (it ends an offset that was not read). **Within** a period is the span from now:
//!   三天内, 两小时之内, 三个工作日内, "within 5 days", "within the next hour", "in the next two
//!   weeks", "over the next 45 minutes" (today..`end_date`, or now..now + the period); so are
//!   periods said from now, 未来三天, 接下来的两周, 今后三个小时, "the next 4 days", "next three
//!   weeks" (with a number: "next week" is the week), and back to now, 过去两天, 最近一周, 近五天,
//!   "the past 2 days", "over the last 10 days", "in the past hour" (`date`..today). The rest of
//!   today, "later today", "later in the day", 今天晚些时候, 今天稍后, is now..midnight (`end_time`
//!   00:00 of the next date); with an hour after it, "later today at 4", only the day. From now
//!   to a day, "from now until friday", "between now and next tuesday", 从现在到周五, 现在到月底, is
//!   today from now (`start_time`) through that day (`end_date`). Minute/hour offsets give date and start time (reference instant + offset, DST-correct);
//!   day/week/month/year offsets give a date (grain day). **Business days** count Monday to
//!   Friday: "next business day", "the following working day", 下一个工作日 = 1 business day on,
//!   "in three working days", "5 business days from now", 3个工作日后; from a Saturday or Sunday
//!   the next business day is the Monday. Month and year offsets keep the day of the month, or
//!   take the month's last day when it has no such day ("in a month" on 31 January = 28 February).
//! * **The same day in another week, month or year**: 下个月的今天, 下个月今天, 下周的今天, 明年的
//!   这一天, 下个月同一天, 去年的今天, 一个月后的今天, "this day next month", "the same day next
//!   week", "same date next year", "today next week" (not across a comma: "today, next week" is two
//!   matches), "a month from today" = the reference date shifted by that period, grain day; a day
//!   the target month lacks is its **last day** (31 January -> 28/29 February, 29 February + 1 year
//!   -> 28 February). **The same time of day**: 明天这个时候, 下周的这个时候, 三天后的这个时间, "this
//!   time tomorrow", "same time next week", "the same time on friday", "tomorrow same time" = that
//!   date at the reference time (grain minute); 这个时候 and "at the same time" alone are no match.
//! * **Parts of day** without a clock time give `segment`: 凌晨/黎明/后半夜 early_morning, 早上/早晨/
//!   今早/明早/一大早/大清早/morning/"first thing" (before a day: "first thing tomorrow", "first
//!   thing monday"; or "first thing in the morning") morning, 上午 forenoon, 中午/lunch noon,
//!   下午/午后/afternoon afternoon, 晚上/今晚/夜里/tonight/evening/night evening, 全天/整天/白天/
//!   all day all_day.
//! * **Durations** (2小时, 一个半小时, 90分钟, 5天, 两周, 半天, for 2 hours, a couple hours, an hour
//!   and a half, ten days, 45-minute, 2h, 90min, 2h30, ¼ hour, 1½ hours, three quarters of an
//!   hour) give
//!   `duration_minutes`; days and weeks count 1440 and 10080 minutes (months and years vary and are
//!   not read as lengths; 第3天, 3日 and 3周年 are not lengths; "a day"/"a week" is one only after
//!   "for"/"lasting"/"by", since "once a day" is not). Durations written next to each other add up
//!   (3天12小时, 2 hours 30 minutes, 两个星期又一天, 1小时零5分钟, 3 days and 4 hours).
//!   A duration belongs to the time expression of its clause: right after it, or after "for",
//!   "开始", "持续", "历时", "为期", commas or spaces ("下午3点开始，持续2小时", "from 4pm for thirty
//!   minutes"), and also a few words away, before or after it ("后天上午10点评审，开一个半小时",
//!   "明天下午3点开2小时的会", "a 45-minute call friday at 4pm"): the two are **one match** whose
//!   start is the point's and whose end is start + duration; the words between stay in the span and
//!   are reported as its `gap`. "A few words": at most 6 Han characters and 3 Latin words, no
//!   number, no sentence break (。；!?), no comma before a duration that comes first, and none of
//!   然后/之后/再/接着/then/and/after/before/but, which start another action. A duration alone is a
//!   match of its own; its `date` is the reference date (the contract requires one), and its
//!   `confidence` is `assumed` to say so.
//! * **Recurrences** give an RFC 5545 `rrule` (每天 FREQ=DAILY, 每周一三五 FREQ=WEEKLY;BYDAY=MO,WE,FR,
//!   工作日 BYDAY=MO,TU,WE,TH,FR, 每月5号 FREQ=MONTHLY;BYMONTHDAY=5, 每隔一天 FREQ=DAILY;INTERVAL=2,
//!   every three days, every other week, every second week, every 3rd day, monthly, every quarter
//!   / 每季度 FREQ=MONTHLY;INTERVAL=3 ("quarterly" alone is left to the title: "the quarterly
//!   report"), 隔周三 FREQ=WEEKLY;INTERVAL=2;BYDAY=WE, the n-th weekday or working day of every
//!   month: 每月最后一个周五 / "the last friday of every month" FREQ=MONTHLY;BYDAY=-1FR, "every first
//!   monday" FREQ=MONTHLY;BYDAY=1MO, 每个月第一个工作日 FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1 ...)
//!   "once a week"/"once a month" (FREQ=WEEKLY/MONTHLY), "bi-weekly", "each weekday", "every 20th
//!   of the month" (FREQ=MONTHLY;BYMONTHDAY=20), 每个月的第一天, 每月初 (BYMONTHDAY=1), "every 20
//!   minutes", "every half hour", 每半小时, 每十分钟 (FREQ=MINUTELY;INTERVAL=..); 每隔 N 分钟/小时 is
//!   every N minutes or hours (隔 skips only whole days and weeks: 每隔一天 = every other day).
//!   An interval and the weekdays written apart are one weekly rule: "biweekly on mondays",
//!   "every other week on tuesdays and thursdays" FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;
//!   and `date` = the first occurrence on or after today; when a clock time is attached and today's
//!   occurrence has already passed, the next occurrence.
//!
//! # Matching
//!
//! Pieces written next to each other (only spaces, or glue such as at/on/of/的/commas/parentheses,
//! between them) form one match in any order ("3pm tomorrow", "tomorrow at 3pm",
//! "3月5日(周四)下午2点"); glue never starts or ends a match. Bare numbers become hours only in
//! context ("at 3", "3-4pm", "from 3 to 5", "8 tonight"); "3个苹果", "pages 10-20", "有3点建议",
//! "一点也不" are not times. The ambiguous English abbreviations mon/wed/sat/sun and the month names
//! may/march need context ("on sat", "next mon", "march 3", "in may"; for the weekdays also a part
//! of day or a clock time after them: "sat morning", "sun @ 2", "wed at 3", but not after "the";
//! or a meal before them: "lunch wed", "dinner sat").
//! Every English word a phrase is made of also matches its common abbreviations and misspellings
//! (nxt, wk, wknd, tmrw, tmr, tmw, tmro, tomo, tommorow, yday, tdy, tonite, nite, hrs, mins, mth,
//! yr, morn, arvo, biz: "nxt wk", "tmrw 3pm", "fri nite"; `text::ABBREVIATIONS`), and the chat
//! spellings 2day, 2moro, 2morrow, 2mrw, 2nite, 2night are today, tomorrow and tonight ("a 2day
//! workshop" is a length). Right after a day, am/pm/eve name its morning, afternoon or evening
//! ("tmrw am", "monday pm", "sat eve"); elsewhere "am" is a verb and "eve" a name. "by" joins a day
//! and its hour ("tomorrow by 5pm") but makes no hour of a bare number ("by 5"). **Typos**: an
//! English word of five letters or more that is one edit (a letter added, dropped, changed or two
//! swapped) from a day, month or part-of-day name with its first letter is that name ("thrusday",
//! "wendesday", "decmber", "febuary"), and the reading is `inferred`; the ordinary words one edit
//! from such a name stay words ("sundae", "match", "marsh", "mourning"; `typos::ORDINARY`).
//!
//! `grain` is minute/hour for clock times (minute when minutes are written), day for dates, parts
//! of day and date ranges, and week/month/year for those spans; durations and time offsets are
//! minute grain.
//!
//! Every resolution also says how much of it was read ([`Confidence`]): `read` when the text
//! states it (by the rules above), `inferred` when a default chose between readings the text
//! leaves open (the half of the day of a bare hour 1-11, in a range only when neither end is
//! marked; day and month of 05.04.2027; the 17:00 of "EOD"; the Friday of "end of the week"),
//! `assumed` for the reference date a duration alone carries.
//!
//! [`resolve`] folds the expressions of a tool argument into one when they fill different slots
//! ("明天 开会 下午3点" = tomorrow 15:00, "下午3点 2小时" = 15:00-17:00 with a duration).
//!
//! # Not handled
//!
//! Lunar dates other than the festivals (农历八月十五, 腊月二十三), solar terms (清明, 冬至), public
//! holidays of a country as days off (a range like 国庆 golden week, working days that skip them),
//! 十一 for the National Day (also eleven), seasons, quarters, halves of a year; typos in Chinese or
//! in a word's first letter, and in words shorter than five letters; time zones named in the text;
//! seconds; "before/after X" as open intervals (only X is returned); two-digit years after a day
//! and month (24.12.27); context carried between separate matches other than the time of a list of
//! days ("明天上午9点到11点，下午2点到4点" gives the afternoon range on the reference date; "下周二或周三"
//! gives this week's Wednesday); lists of days of the month (每月1号和15号 reads the 1st only); 下班前
//! (before the end of work); dinner, breakfast and the other meals as
//! parts of day of their own (only lunch is one; the others only decide a bare hour).

mod clauses;
mod dates;
mod digits;
mod en;
mod grammar;
mod holidays;
mod lexer;
mod lexicon;
mod numerals;
mod recurrence;
mod resolve;
mod rest_of_day;
mod segment;
mod serde_fmt;
mod text;
mod typos;
mod types;
mod zh;

use chrono::{DateTime, NaiveDate, NaiveTime, Timelike, Utc};
use chrono_tz::Tz;
use serde::Serialize;

pub use segment::{ParseSegmentError, Segment};

/// The reference instant, seen in the user's time zone.
#[derive(Debug, Clone, Copy)]
pub struct TimeContext {
    now: DateTime<Tz>,
}

impl TimeContext {
    /// A context for the UTC instant `now` in zone `tz`.
    pub fn new(now: DateTime<Utc>, tz: Tz) -> Self {
        TimeContext {
            now: now.with_timezone(&tz),
        }
    }
    /// The reference instant in the context's zone.
    pub fn now(&self) -> DateTime<Tz> {
        self.now
    }
    /// The reference (local) date.
    pub fn today(&self) -> NaiveDate {
        self.now.date_naive()
    }
    /// The context's time zone.
    pub fn tz(&self) -> Tz {
        self.now.timezone()
    }
    /// Minutes since local midnight of the reference instant (seconds dropped).
    pub(crate) fn now_minutes(&self) -> u32 {
        self.now.hour() * 60 + self.now.minute()
    }
}

/// How precise a resolution is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grain {
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Year,
}

/// How much of a resolution the text itself states, so that a client can tell a reading from a
/// guess (serialised in snake_case, next to `grain`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// Every field follows from what is written, by the resolver's fixed rules ("明天下午3点",
    /// "next friday", "March 5", "in 2 hours", "每周一"): a year left out is the next one, a bare
    /// weekday the next one; these are the conventions of the calendar, not guesses.
    Read,
    /// A written expression was completed by a default that another reader could take the other
    /// way: the half of the day of a bare hour ("3点", "at 3", "9ish", "from 3 to 5"), the order of
    /// day and month in 05.04.2027, the 17:00 of "EOD", the Friday of "end of the week".
    Inferred,
    /// A field is there only because every resolution has it and the text gives nothing for it:
    /// the `date` of a duration alone ("2小时", "for 3 days") is the reference date.
    Assumed,
}

/// The resolved value of one time expression.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resolution {
    /// Always present (for a bare duration: the reference date).
    #[serde(with = "serde_fmt::date")]
    pub date: NaiveDate,
    #[serde(with = "serde_fmt::opt_time")]
    pub start_time: Option<NaiveTime>,
    #[serde(with = "serde_fmt::opt_time")]
    pub end_time: Option<NaiveTime>,
    /// A range ending on another day, or the inclusive last day of a day-grain span.
    #[serde(with = "serde_fmt::opt_date")]
    pub end_date: Option<NaiveDate>,
    /// A part of day named without a clock time.
    pub segment: Option<Segment>,
    pub duration_minutes: Option<u32>,
    /// RFC 5545 RRULE without the "RRULE:" prefix.
    pub rrule: Option<String>,
    pub grain: Grain,
    pub confidence: Confidence,
    /// Whether the text names the day: a relative day, a weekday, a date, an offset of a day or
    /// more, a holiday, a week, month or year, a recurrence's days ("明天", "friday 3pm", "3天后",
    /// "中秋", "下周", "每周一"); false for a clock time, a part of day, an offset in minutes or
    /// hours or a length alone ("晚上8点", "3pm", "in 2 hours", "2小时"), whose date is the
    /// reference date by default. An offset in minutes or hours whose result falls on another day
    /// ("in 45 minutes" said at 23:40) does state that day: keeping the item's day would put it a
    /// day early. Not serialised (the JSON of `/api/parse-time` is unchanged).
    #[serde(skip)]
    pub day_stated: bool,
}

/// One time expression found in a text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimeMatch {
    /// Unicode code points of the original text, end exclusive.
    pub span: (usize, usize),
    pub text: String,
    /// Words inside `span` that are not part of the expression, in code points: what stands
    /// between a start and its duration ("后天上午10点**评审，开**一个半小时"). Callers that take
    /// the time words out of a sentence keep these.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gap: Option<(usize, usize)>,
    pub resolution: Resolution,
}

impl TimeMatch {
    /// The spans (code points) of the time words themselves: `span` without `gap`.
    pub fn pieces(&self) -> Vec<(usize, usize)> {
        match self.gap {
            Some((a, b)) => vec![(self.span.0, a), (b, self.span.1)],
            None => vec![self.span],
        }
    }
}

impl Resolution {
    /// A bare date of the given grain: no times, segment, duration or recurrence; it states its
    /// day (`day_stated`).
    pub fn date_only(date: NaiveDate, grain: Grain) -> Self {
        Resolution {
            date,
            start_time: None,
            end_time: None,
            end_date: None,
            segment: None,
            duration_minutes: None,
            rrule: None,
            grain,
            confidence: Confidence::Read,
            day_stated: true,
        }
    }
}

/// Every time expression in free text, left to right, non-overlapping, each maximal.
pub fn find_all(text: &str, ctx: &TimeContext) -> Vec<TimeMatch> {
    let t = text::Text::new(text);
    let exprs = clauses::parse(&t);
    let mut out = Vec::with_capacity(exprs.len());
    for e in &exprs {
        if let Some(mut res) = resolve::resolve_expr(e, ctx) {
            mark_typos(&t, e, &mut res);
            let (s, end) = (t.to_original(e.s), t.to_original(e.e));
            out.push(TimeMatch {
                span: (s, end),
                text: t.original_slice(text, s, end),
                gap: e.gap.map(|(a, b)| (t.to_original(a), t.to_original(b))),
                resolution: res,
            });
        }
    }
    out
}

/// The combined resolution of a text meant to be one time expression, or None when nothing in it
/// is a time expression. Expressions separated by other words are combined when they fill different
/// slots ("明天 开会 下午3点" = tomorrow 15:00); a following duration is attached.
pub fn resolve(text: &str, ctx: &TimeContext) -> Option<Resolution> {
    let t = text::Text::new(text);
    let exprs = clauses::parse(&t);
    let mut iter = exprs.into_iter();
    let mut acc = iter.next()?;
    for e in iter {
        if !grammar::absorb(&mut acc, &e) {
            break;
        }
    }
    let mut res = resolve::resolve_expr(&acc, ctx)?;
    mark_typos(&t, &acc, &mut res);
    Some(res)
}

/// A reading that rests on a corrected typo ("thrusday") is a guess at what was meant.
fn mark_typos(t: &text::Text, e: &grammar::Expr, res: &mut Resolution) {
    if res.confidence == Confidence::Read && t.typo_within(e.s, e.e) {
        res.confidence = Confidence::Inferred;
    }
}

/// The numbers (runs of digits, ASCII or full-width) in `text` that no match in `matches` covers,
/// as spans in code points, each with the character after it when that is a unit (年 月 日 号 点 时
/// 分 天 周). A number next to a date the resolver did read is usually one it could not: out of
/// range, as in "99999年1月1日" (only "1月1日" is read) or "2026年13月45日". Callers that act on a date
/// refuse rather than act on a different one than the text gives.
pub fn unread_numbers(text: &str, matches: &[TimeMatch]) -> Vec<(usize, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let is_digit = |c: char| c.is_ascii_digit() || ('０'..='９').contains(&c);
    let covered = |i: usize| matches.iter().any(|m| m.span.0 <= i && i < m.span.1);
    let mut unread = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !is_digit(chars[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && is_digit(chars[i]) {
            i += 1;
        }
        if (start..i).any(|j| !covered(j)) {
            let unit = chars.get(i).is_some_and(|c| "年月日号號点點时時分天周週".contains(*c));
            unread.push((start, if unit { i + 1 } else { i }));
        }
    }
    unread
}

/// The spans (Unicode code points, end exclusive) of every word of `text` that belongs to the
/// resolver's vocabulary, whether or not it formed a match: weekday and month names, their
/// abbreviations and tolerated typos, relative days, parts of day, units (hours, minutes, 天,
/// 小时), am/pm, 点/号/月 after a number, 周/星期 with their weekday, holidays, and next/last/this
/// only before a time word. A reader that finds such a word outside every match of
/// [`find_all`] knows its reading of the time is uncertain. One pass over the text.
pub fn time_word_spans(text: &str) -> Vec<(usize, usize)> {
    let t = text::Text::new(text);
    lexicon::time_words(&t).into_iter().map(|(s, e)| (t.to_original(s), t.to_original(e))).collect()
}

/// Whether `c` is a Han character (a CJK ideograph).
pub fn is_han(c: char) -> bool {
    ('\u{3400}'..='\u{9FFF}').contains(&c) || ('\u{F900}'..='\u{FAFF}').contains(&c)
}

/// Whether a text is Chinese, for reading it and for answering in its language: it has a Han
/// character.
pub fn is_chinese(text: &str) -> bool {
    text.chars().any(is_han)
}

/// The number written at the start of `text`, with its length in code points: digits (ASCII or
/// full-width), Chinese numerals (三, 十二, 两, 一百零五) or English number words (three,
/// twenty-five). The same reader the resolver uses for dates and times.
pub fn leading_number(text: &str) -> Option<(u32, usize)> {
    let t = text::Text::new(text);
    if t.len() == 0 {
        return None;
    }
    numerals::int_any(&t, 0).map(|(value, end, _)| (value, end)).or_else(|| numerals::en_number_word(&t, 0))
}
