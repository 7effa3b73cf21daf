//! Per-model token prices and the cost of a model turn.
//!
//! Costs are kept as integer nano-units of the configured currency (1 CNY = 10^9), so that summing
//! many small turns never drifts the way floating-point money does.

use std::collections::HashMap;

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

    pub fn get(&self, model: &str) -> Option<&ModelPrice> {
        self.0.get(model)
    }

    /// Cost of a turn; a model without a configured price costs nothing (and the worker logs it once).
    pub fn cost_nanos(&self, model: &str, input: u64, output: u64, cached: u64) -> i64 {
        self.get(model).map_or(0, |p| p.cost_nanos(input, output, cached))
    }
}

/// Renders nano-units as a decimal amount for JSON (`0.001234`).
pub fn nanos_to_amount(nanos: i64) -> f64 {
    // Round to 9 decimals so 0.1 + 0.2 style noise never shows up in responses.
    (nanos as f64 / 1e9 * 1e9).round() / 1e9
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
        assert_eq!(PriceTable::default().cost_nanos("nope", 10, 10, 0), 0);
    }

    #[test]
    fn amounts_render_as_decimals() {
        assert_eq!(nanos_to_amount(1_234_000), 0.001234);
    }
}
