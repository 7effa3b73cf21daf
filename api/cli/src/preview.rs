//! `quickact preview "sentence"`: how the server's local reader reads a sentence, without running
//! it (`POST /api/quick-action/preview`): each frame with its act, its rule and whether it is
//! certain, each part of the sentence with its role, then the words it could not read and why.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::{Client, exit, print_json, text};

impl Client {
    /// Exits 0 when the reading is certain (a run would act on it as read), 4 when it is not.
    pub(crate) async fn preview(&self, sentence: &str, tz: Option<String>) -> Result<u8, String> {
        let mut body = json!({ "text": sentence });
        if let Some(tz) = tz {
            body["tz"] = json!(tz);
        }
        let reading = self.call(self.request(Method::POST, "/api/quick-action/preview").json(&body), StatusCode::OK).await?;
        if self.json {
            print_json(&reading);
        } else {
            print!("{}", reading_text(&reading));
        }
        Ok(if reading["certain"].as_bool() == Some(true) { exit::DONE } else { exit::ERROR })
    }
}

/// The reading for people:
///
/// ```text
/// certain: move my dentist appointment to Friday 10am
/// 1. move, certain (rule move_to)
///      action    move
///      noise     my
///      target    dentist appointment
///      ...
/// ```
fn reading_text(reading: &Value) -> String {
    let mut out = format!("{}: {}\n", text(&reading["verdict"]), text(&reading["text"]));
    let frames = reading["frames"].as_array().map(Vec::as_slice).unwrap_or_default();
    for (n, frame) in frames.iter().enumerate() {
        let certainty = if frame["certain"].as_bool() == Some(true) { "certain" } else { "not certain" };
        out.push_str(&format!("{}. {}, {certainty} (rule {})", n + 1, text(&frame["act"]), text(&frame["rule"])));
        // Several frames: say which clause each came from.
        if frames.len() > 1 {
            out.push_str(&format!(": {}", text(&frame["text"])));
        }
        out.push('\n');
        for part in frame["parts"].as_array().into_iter().flatten() {
            out.push_str(&format!("     {:<12}{}\n", text(&part["role"]), text(&part["text"])));
        }
    }
    let unread = reading["unread"].as_array().map(Vec::as_slice).unwrap_or_default();
    if !unread.is_empty() {
        out.push_str("unread:\n");
        for word in unread {
            out.push_str(&format!("  \"{}\": {}\n", text(&word["text"]), text(&word["reason"])));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::reading_text;

    #[test]
    fn a_reading_shows_each_frame_its_parts_and_the_unread_words() {
        let reading = json!({
            "text": "asdfgh, move the standup to 4", "verdict": "uncertain", "certain": false,
            "frames": [
                {"act": "create", "rule": "create_item", "text": "asdfgh", "certain": false, "parts": []},
                {"act": "move", "rule": "move_to", "text": "move the standup to 4", "certain": true, "parts": [
                    {"role": "action", "span": [8, 12], "text": "move"},
                    {"role": "target", "span": [17, 24], "text": "standup"},
                    {"role": "new_time", "span": [28, 29], "text": "4"},
                ]},
            ],
            "unread": [{"span": [0, 6], "text": "asdfgh", "reason": "no rule reads this clause"}],
        });
        assert_eq!(
            reading_text(&reading),
            "uncertain: asdfgh, move the standup to 4\n\
             1. create, not certain (rule create_item): asdfgh\n\
             2. move, certain (rule move_to): move the standup to 4\n\
             \x20    action      move\n\
             \x20    target      standup\n\
             \x20    new_time    4\n\
             unread:\n\
             \x20 \"asdfgh\": no rule reads this clause\n"
        );
    }
}
