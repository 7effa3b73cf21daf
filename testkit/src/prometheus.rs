//! Reading the Prometheus text format our `/metrics` routes answer, to assert on real values.

use std::collections::BTreeMap;

/// A scrape: every sample line, by metric name and label set.
#[derive(Debug, Clone)]
pub struct Scrape {
    pub text: String,
    samples: Vec<(String, BTreeMap<String, String>, f64)>,
}

impl Scrape {
    /// Parses the text format (comment lines aside). Panics on a line it cannot read: our exporter
    /// must never write one.
    pub fn parse(text: &str) -> Self {
        let mut samples = Vec::new();
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("not a sample line: {line}"));
            let value: f64 = value.parse().unwrap_or_else(|_| panic!("not a number in: {line}"));
            let (name, labels) = match series.split_once('{') {
                None => (series.to_owned(), BTreeMap::new()),
                Some((name, rest)) => {
                    let body = rest.strip_suffix('}').unwrap_or_else(|| panic!("unclosed labels: {line}"));
                    let labels = body
                        .split("\",")
                        .filter(|pair| !pair.is_empty())
                        .map(|pair| {
                            let (key, value) = pair.split_once('=').unwrap_or_else(|| panic!("bad label in: {line}"));
                            (key.to_owned(), value.trim_matches('"').to_owned())
                        })
                        .collect();
                    (name.to_owned(), labels)
                }
            };
            samples.push((name, labels, value));
        }
        Scrape { text: text.to_owned(), samples }
    }

    /// The value of the series `name` with exactly `labels`, if the scrape has it.
    pub fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let wanted: BTreeMap<String, String> = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        self.samples.iter().find(|(n, l, _)| n == name && *l == wanted).map(|(_, _, v)| *v)
    }

    /// The value of a series that must be there (panics with the scrape otherwise).
    pub fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.get(name, labels).unwrap_or_else(|| panic!("no series {name}{labels:?} in:\n{}", self.text))
    }

    /// Whether any series of metric `name` exists.
    pub fn has(&self, name: &str) -> bool {
        self.samples.iter().any(|(n, _, _)| n == name)
    }

    /// Every label set of metric `name`.
    pub fn label_sets(&self, name: &str) -> Vec<BTreeMap<String, String>> {
        self.samples.iter().filter(|(n, _, _)| n == name).map(|(_, l, _)| l.clone()).collect()
    }
}

/// Scrapes `url` (a `/metrics` route).
pub async fn scrape(client: &reqwest::Client, url: &str) -> Scrape {
    let response = client.get(url).send().await.expect("the metrics route answers");
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(content_type.starts_with("text/plain"), "{content_type}");
    Scrape::parse(&response.text().await.unwrap())
}
