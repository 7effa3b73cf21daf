//! The corpus format (`docs/corpus-format.md`) read into [`Case`]s: every malformed row is
//! reported with its line and what is wrong with it, all of them at once.

use chrono::{NaiveDate, NaiveDateTime, NaiveTime, TimeZone};
use chrono_tz::Tz;

use super::case::{Case, Effect, Expect, Item, NewItem, Slot, When};

/// What a row is when a trailing column is left out or written `-`.
const DEFAULT_NOW: &str = "2026-02-07 09:00";
const DEFAULT_TIME_ZONE: &str = "Asia/Shanghai";
const NOW_FORMAT: &str = "%Y-%m-%d %H:%M";
const KINDS: &[&str] = &["event", "todo", "reminder"];
const SEGMENTS: &[&str] = &["early_morning", "morning", "forenoon", "noon", "afternoon", "evening", "all_day"];

/// A malformed row.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Every case of a corpus file's text, or every malformed row.
pub fn parse_corpus(text: &str) -> Result<Vec<Case>, Vec<ParseError>> {
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    for (n, row) in text.lines().enumerate() {
        let line = n + 1;
        if row.trim().is_empty() || row.starts_with('#') {
            continue;
        }
        match parse_row(row) {
            Ok(case) => cases.push(Case { line, ..case }),
            Err(message) => errors.push(ParseError { line, message }),
        }
    }
    if errors.is_empty() { Ok(cases) } else { Err(errors) }
}

/// One row: `kind<TAB>text<TAB>expect[<TAB>setup[<TAB>now[<TAB>tz]]]`.
fn parse_row(row: &str) -> Result<Case, String> {
    let columns: Vec<&str> = row.split('\t').collect();
    if !(3..=6).contains(&columns.len()) {
        return Err(format!(
            "{} tab-separated columns; a row is kind, text, expect, then optionally setup, now and tz",
            columns.len()
        ));
    }
    let column = |i: usize| columns.get(i).map(|c| c.trim()).filter(|c| !c.is_empty() && *c != "-");
    let kind = columns[0].trim();
    match kind.split_once('/') {
        Some((family, name)) if !family.trim().is_empty() && !name.trim().is_empty() => {}
        _ => return Err(format!("kind {kind:?} is not `family/kind`")),
    }
    let text = columns[1];
    if text.trim().is_empty() {
        return Err("the text is empty".into());
    }
    let setup_text = column(3).unwrap_or_default();
    let setup = parse_setup(setup_text).map_err(|e| format!("setup: {e}"))?;
    let expect_text = columns[2].trim();
    let expect = parse_expect(expect_text, setup.len()).map_err(|e| format!("expect: {e}"))?;
    let now_text = column(4).unwrap_or(DEFAULT_NOW);
    let now = NaiveDateTime::parse_from_str(now_text, NOW_FORMAT).map_err(|_| format!("now {now_text:?} is not `YYYY-MM-DD HH:MM`"))?;
    let zone_text = column(5).unwrap_or(DEFAULT_TIME_ZONE);
    let time_zone: Tz = zone_text.parse().map_err(|_| format!("tz {zone_text:?} is not an IANA zone name"))?;
    if time_zone.from_local_datetime(&now).earliest().is_none() {
        return Err(format!("now {now_text} does not exist in {zone_text} (the clocks skip it)"));
    }
    Ok(Case {
        file: String::new(),
        line: 0,
        kind: kind.to_owned(),
        text: text.to_owned(),
        expect,
        setup,
        now,
        time_zone,
        expect_text: expect_text.to_owned(),
        setup_text: setup_text.to_owned(),
    })
}

// ---------------------------------------------------------------------------------------------
// Tokens: bare words, and quoted strings (`"a"|"b"` is one token of two alternatives)
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Quoted(Vec<String>),
}

impl Token {
    fn word(&self) -> Option<&str> {
        match self {
            Token::Word(w) => Some(w),
            Token::Quoted(_) => None,
        }
    }

    fn show(&self) -> String {
        match self {
            Token::Word(w) => format!("`{w}`"),
            Token::Quoted(q) => q.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join("|"),
        }
    }
}

fn tokenize(field: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let mut chars = field.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '"' {
            let mut alternatives = Vec::new();
            loop {
                chars.next();
                let mut quoted = String::new();
                let mut closed = false;
                for c in chars.by_ref() {
                    if c == '"' {
                        closed = true;
                        break;
                    }
                    quoted.push(c);
                }
                if !closed {
                    return Err(format!("the quote \"{quoted} is never closed"));
                }
                alternatives.push(quoted);
                if chars.peek() == Some(&'|') {
                    chars.next();
                    if chars.peek() != Some(&'"') {
                        return Err(format!("`|` after {:?} is not followed by a quoted title", alternatives.last().unwrap()));
                    }
                } else {
                    break;
                }
            }
            if let Some(&next) = chars.peek().filter(|c| !c.is_whitespace()) {
                return Err(format!("{:?} runs into `{next}` (an unclosed quote, or a space missing)", alternatives.last().unwrap()));
            }
            tokens.push(Token::Quoted(alternatives));
        } else {
            let mut word = String::new();
            while let Some(&c) = chars.peek().filter(|c| !c.is_whitespace()) {
                if c == '"' {
                    return Err(format!("a quote inside the word `{word}\"`"));
                }
                word.push(c);
                chars.next();
            }
            tokens.push(Token::Word(word));
        }
    }
    Ok(tokens)
}

/// Splits tokens at each bare `separator` word.
fn split_tokens(tokens: Vec<Token>, separator: &str) -> Vec<Vec<Token>> {
    let mut parts = vec![Vec::new()];
    for token in tokens {
        if token.word() == Some(separator) {
            parts.push(Vec::new());
        } else {
            parts.last_mut().unwrap().push(token);
        }
    }
    parts
}

// ---------------------------------------------------------------------------------------------
// Items: `<kind> "<title>" <date> [<time>] [p<N>] [done] [every <RRULE>] [note "<text>"]`
// ---------------------------------------------------------------------------------------------

/// The fields of an item as written; which are allowed depends on where it is written.
#[derive(Debug, Default)]
struct Fields {
    kind: String,
    titles: Vec<String>,
    date: String,
    when: Option<When>,
    priority: Option<u8>,
    done: bool,
    recurrence: Option<String>,
    note: Option<String>,
}

fn parse_setup(text: &str) -> Result<Vec<Item>, String> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let mut items = Vec::new();
    for (i, tokens) in split_tokens(tokenize(text)?, ";").into_iter().enumerate() {
        let fields = parse_fields(&tokens).map_err(|e| format!("item #{i}: {e}"))?;
        if fields.titles.len() != 1 {
            return Err(format!("item #{i}: one title only (alternatives are for `creates`)"));
        }
        if fields.note.is_some() {
            return Err(format!("item #{i}: `note` is for `creates`"));
        }
        let Fields { kind, mut titles, date, when, priority, done, recurrence, .. } = fields;
        items.push(Item { kind, title: titles.remove(0), date, when, priority, done, recurrence });
    }
    Ok(items)
}

fn parse_fields(tokens: &[Token]) -> Result<Fields, String> {
    let (kind, title, date) = match tokens {
        [kind, title, date, ..] => (kind, title, date),
        _ => return Err("an item is `<kind> \"<title>\" <date> ...`".into()),
    };
    let kind = kind.word().filter(|k| KINDS.contains(k)).ok_or_else(|| format!("kind {} is not event, todo or reminder", kind.show()))?;
    let Token::Quoted(titles) = title else { return Err(format!("the title {} is not in double quotes", title.show())) };
    if titles.iter().any(|t| t.trim().is_empty()) {
        return Err("an empty title".into());
    }
    let mut fields = Fields { kind: kind.to_owned(), titles: titles.clone(), date: parse_date(date)?, ..Fields::default() };
    let mut rest = tokens[3..].iter();
    while let Some(token) = rest.next() {
        let word = token.word().unwrap_or_default();
        if let Some(when) = parse_when(word)? {
            set_once(&mut fields.when, when, "time")?;
        } else if let Some(n) = word.strip_prefix('p').filter(|n| n.len() == 1) {
            let priority = n.parse().ok().filter(|p| (1..=4).contains(p)).ok_or_else(|| format!("priority `{word}` is not p1..p4"))?;
            set_once(&mut fields.priority, priority, "priority")?;
        } else if word == "done" && !fields.done {
            fields.done = true;
        } else if word == "every" {
            let rule = rest.next().and_then(Token::word).filter(|r| r.starts_with("FREQ=")).ok_or("`every` is not followed by `FREQ=...`")?;
            set_once(&mut fields.recurrence, rule.to_owned(), "recurrence")?;
        } else if word == "note" {
            let note = match rest.next() {
                Some(Token::Quoted(q)) if q.len() == 1 => q[0].clone(),
                _ => return Err("`note` is not followed by one quoted text".into()),
            };
            set_once(&mut fields.note, note, "note")?;
        } else {
            return Err(format!("unexpected {} (a time, p1..p4, done, every FREQ=..., note \"...\")", token.show()));
        }
    }
    Ok(fields)
}

fn set_once<T>(slot: &mut Option<T>, value: T, what: &str) -> Result<(), String> {
    if slot.is_some() {
        return Err(format!("a second {what}"));
    }
    *slot = Some(value);
    Ok(())
}

fn parse_date(token: &Token) -> Result<String, String> {
    token
        .word()
        .filter(|w| w.len() == 10)
        .and_then(|w| NaiveDate::parse_from_str(w, "%Y-%m-%d").ok())
        .map(|d| d.format("%Y-%m-%d").to_string())
        .ok_or_else(|| format!("date {} is not YYYY-MM-DD", token.show()))
}

/// A time (`HH:MM-HH:MM`, `HH:MM`) or a part of the day; `None` when the word is neither.
fn parse_when(word: &str) -> Result<Option<When>, String> {
    if SEGMENTS.contains(&word) {
        return Ok(Some(When::Segment(word.to_owned())));
    }
    if !word.starts_with(|c: char| c.is_ascii_digit()) || !word.contains(':') {
        return Ok(None);
    }
    let clock = |t: &str| {
        NaiveTime::parse_from_str(t, "%H:%M")
            .ok()
            .filter(|_| t.len() == 5)
            .map(|t| t.format("%H:%M").to_string())
            .ok_or_else(|| format!("time `{t}` is not HH:MM"))
    };
    Ok(Some(match word.split_once('-') {
        Some((start, end)) => When::Range(clock(start)?, clock(end)?),
        None => When::At(clock(word)?),
    }))
}

// ---------------------------------------------------------------------------------------------
// Expectations
// ---------------------------------------------------------------------------------------------

fn parse_expect(text: &str, setup_len: usize) -> Result<Expect, String> {
    let parts = split_tokens(tokenize(text)?, "&&");
    let mut expects = Vec::new();
    for part in &parts {
        expects.push(parse_one_expect(part, setup_len)?);
    }
    let expect = if expects.len() == 1 {
        expects.remove(0)
    } else {
        let mut effects = Vec::new();
        for expect in expects {
            match expect {
                Expect::Effects(mut some) => effects.append(&mut some),
                _ => return Err("only effects (creates, completes, deletes, moves) are joined with ` && `".into()),
            }
        }
        Expect::Effects(effects)
    };
    let named: Vec<usize> = match &expect {
        Expect::Effects(_) => expect.indexes(),
        _ => vec![],
    };
    if let Some(twice) = named.iter().find(|i| named.iter().filter(|j| j == i).count() > 1) {
        return Err(format!("#{twice} is named by two effects"));
    }
    Ok(expect)
}

fn parse_one_expect(tokens: &[Token], setup_len: usize) -> Result<Expect, String> {
    let words: Vec<&str> = tokens.iter().map(|t| t.word().unwrap_or("")).collect();
    let indexes = |from: usize, at_least: usize| parse_indexes(&tokens[from.min(tokens.len())..], setup_len, at_least);
    Ok(match words.as_slice() {
        ["creates", ..] => {
            let fields = parse_fields(&tokens[1..])?;
            if fields.done {
                return Err("a created item is open: no `done`".into());
            }
            let Fields { kind, titles, date, when, priority, recurrence, note, .. } = fields;
            Expect::Effects(vec![Effect::Creates(NewItem { kind, titles, date, when, priority, recurrence, note })])
        }
        ["completes", ..] => Expect::Effects(vec![Effect::Completes(indexes(1, 1)?)]),
        ["deletes", ..] => Expect::Effects(vec![Effect::Deletes(indexes(1, 1)?)]),
        ["moves", _, "to", _, ..] if tokens.len() <= 5 => {
            let item = parse_indexes(&tokens[1..2], setup_len, 1)?[0];
            let date = parse_date(&tokens[3])?;
            let when = match words.get(4) {
                Some(w) => Some(parse_when(w)?.ok_or_else(|| format!("`{w}` is not a time or a part of the day"))?),
                None => None,
            };
            Expect::Effects(vec![Effect::Moves(item, Slot { date, when })])
        }
        ["moves", ..] => return Err("`moves #i to <date> [<time>]`".into()),
        ["lists", "in", "order", ..] => Expect::Lists { items: indexes(3, 1)?, ordered: true },
        ["lists", ..] => Expect::Lists { items: indexes(1, 0)?, ordered: false },
        ["asks", "which", ..] => Expect::AsksWhich(indexes(2, 1)?),
        ["asks", "conflict", ..] => Expect::AsksConflict(indexes(2, 1)?),
        ["asks", "what"] => Expect::AsksWhat,
        ["asks", "time", "passed"] => Expect::AsksTimePassed,
        ["not", "found"] => Expect::NotFound,
        ["declines"] => Expect::Declines,
        [] => return Err("empty".into()),
        _ => {
            let shown: Vec<String> = tokens.iter().map(Token::show).collect();
            return Err(format!(
                "{} is not creates, completes, deletes, moves, lists, asks which|what|time passed|conflict, not found or declines",
                shown.join(" ")
            ));
        }
    })
}

/// `#i #j ...`: at least `at_least`, each in the setup.
fn parse_indexes(tokens: &[Token], setup_len: usize, at_least: usize) -> Result<Vec<usize>, String> {
    let mut indexes = Vec::new();
    for token in tokens {
        let i: usize = token
            .word()
            .and_then(|w| w.strip_prefix('#'))
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("{} is not an item index `#i`", token.show()))?;
        if i >= setup_len {
            return Err(format!("#{i} points past the setup ({setup_len} items)"));
        }
        indexes.push(i);
    }
    if indexes.len() < at_least {
        return Err(format!("at least {at_least} item index `#i` is needed"));
    }
    Ok(indexes)
}
