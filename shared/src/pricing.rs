//! Per-model token prices and the cost of a model turn.
//!
//! Costs are kept as integer nano-units of the configured currency (1 CNY = 10^9), so that summing
//! many small turns never drifts the way floating-point money does.

use std::{
    collections::{HashMap, HashSet},
    sync::Mutex,
};

/// Prices of one model, per million tokens, in the configured currency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelPrice {
    input_per_million: f64,
    output_per_million: f64,
    cached_input_per_million: f64,
}

impl ModelPrice {
    pub fn per_million(input: f64, output: f64, cached_input: f64) -> Self {
        Self { input_per_million: input, output_per_million: output, cached_input_per_million: cached_input }
    }

    /// Cost in nano-units. `input` counts every prompt token, cached ones included (as OpenAI reports
    /// `prompt_tokens`); `cached` of them are charged at the cached rate.
    pub fn cost_nanos(&self, input: u64, output: u64, cached: u64) -> i64 {
        let cached = cached.min(input);
        let fresh = (input - cached) as f64;
        // price per million tokens * 10^9 nano / 10^6 tokens = price * 1000 nano per token.
        let nanos = (fresh * self.input_per_million
            + cached as f64 * self.cached_input_per_million
            + output as f64 * self.output_per_million)
            * 1000.0;
        nanos.round() as i64
    }
}

/// Prices by model name.
#[derive(Debug, Clone, Default)]
pub struct PriceTable(HashMap<String, ModelPrice>);

impl PriceTable {
    pub fn insert(&mut self, model: String, price: ModelPrice) {
        self.0.insert(model, price);
    }

    /// The price of `model`: configured under its exact name, or under the name it is a dated
    /// snapshot of (`gpt-4o-mini-2024-07-18` and `gpt-4o-2024-08-06` are priced as `gpt-4o-mini`
    /// and `gpt-4o`: providers answer with the snapshot they served).
    pub fn get(&self, model: &str) -> Option<&ModelPrice> {
        self.0.get(model).or_else(|| self.0.get(undated(model)?))
    }

    /// The price of a turn that was requested as `requested` and answered as `answered` (which may
    /// be a dated snapshot, an alias's target, or empty): the requested model's price, else the
    /// answering one's. `None` when neither is priced.
    pub fn price_of_turn(&self, requested: &str, answered: &str) -> Option<&ModelPrice> {
        self.get(requested).or_else(|| self.get(answered))
    }

    /// Cost of a turn, by [`PriceTable::price_of_turn`]; a turn of a model without a price costs
    /// nothing, and that is logged once per model (so a misconfiguration shows, without flooding).
    pub fn cost_nanos(&self, requested: &str, answered: &str, input: u64, output: u64, cached: u64) -> i64 {
        match self.price_of_turn(requested, answered) {
            Some(price) => price.cost_nanos(input, output, cached),
            None => {
                warn_unpriced_once(requested);
                0
            }
        }
    }
}

/// `name` without a trailing `-YYYY-MM-DD` or `-YYYYMMDD` snapshot date.
fn undated(name: &str) -> Option<&str> {
    let numeric = |s: &str, len: usize| s.len() == len && s.bytes().all(|b| b.is_ascii_digit());
    if let Some((base, date)) = name.rsplit_once('-')
        && numeric(date, 8)
        && !base.is_empty()
    {
        return Some(base);
    }
    let mut parts = name.rsplitn(4, '-');
    let (day, month, year, base) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    (numeric(year, 4) && numeric(month, 2) && numeric(day, 2) && !base.is_empty()).then_some(base)
}

fn warn_unpriced_once(model: &str) {
    static WARNED: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let mut warned = WARNED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if warned.get_or_insert_with(HashSet::new).insert(model.to_owned()) {
        tracing::warn!(model, "no price is configured for this model (QUICKACT_MODEL_PRICES): its turns cost 0");
    }
}

/// Renders nano-units as a decimal amount for JSON (`0.001234`).
pub fn nanos_to_amount(nanos: i64) -> f64 {
    // Round to 9 decimals so 0.1 + 0.2 style noise never shows up in responses.
    (nanos as f64 / 1e9 * 1e9).round() / 1e9
}

/// An amount of money as text with as many digits as it needs and no more: two decimals from 1
/// up, three significant digits below (model costs are fractions of a cent), trailing zeros
/// dropped; zero is `0`. Verdicts (a budget's) and the admin page write amounts this way.
pub fn amount_text(amount: f64) -> String {
    if amount == 0.0 || !amount.is_finite() {
        return "0".into();
    }
    let decimals = if amount.abs() >= 1.0 { 2 } else { (2 - amount.abs().log10().floor() as i32).clamp(2, 12) as usize };
    let text = format!("{amount:.decimals$}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    text.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_tokens_are_charged_at_the_cached_rate() {
        let price = ModelPrice::per_million(1.0, 4.0, 0.25);
        // 1000 prompt tokens of which 400 cached, 100 output.
        let nanos = price.cost_nanos(1000, 100, 400);
        assert_eq!(nanos, (600.0 * 1000.0 + 400.0 * 250.0 + 100.0 * 4000.0) as i64);
    }

    #[test]
    fn unknown_models_cost_nothing() {
        assert_eq!(PriceTable::default().cost_nanos("nope", "nope-2024-01-01", 10, 10, 0), 0);
    }

    #[test]
    fn turns_are_priced_by_the_requested_model_or_the_snapshot_it_is_a_dated_variant_of() {
        let mut table = PriceTable::default();
        table.insert("gpt-4o-mini".into(), ModelPrice::per_million(1.0, 4.0, 0.5));
        table.insert("gpt-4o".into(), ModelPrice::per_million(10.0, 40.0, 5.0));
        let mini = table.cost_nanos("gpt-4o-mini", "gpt-4o-mini", 1000, 0, 0);
        assert_eq!(mini, 1_000_000);
        assert_eq!(table.cost_nanos("gpt-4o-mini", "gpt-4o-mini-2024-07-18", 1000, 0, 0), mini, "answered by a snapshot");
        assert_eq!(table.cost_nanos("my-alias", "gpt-4o-mini-2024-07-18", 1000, 0, 0), mini, "an unpriced alias falls back to the answer");
        assert_eq!(table.cost_nanos("gpt-4o-2024-08-06", "", 1000, 0, 0), 10_000_000, "a dated request");
        assert_eq!(table.cost_nanos("gpt-4o-mini-20240718", "", 1000, 0, 0), mini, "a compact date");
        assert_eq!(table.cost_nanos("gpt-4o-mini", "gpt-4o-2024-08-06", 1000, 0, 0), mini, "the requested model wins");
        assert!(table.get("gpt-4o-mini-preview").is_none(), "only dates are stripped");
        assert!(table.get("2024-07-18").is_none());
    }

    #[test]
    fn amounts_render_as_decimals() {
        assert_eq!(nanos_to_amount(1_234_000), 0.001234);
    }
}
