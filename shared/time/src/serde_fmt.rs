//! Serde helpers: dates as "YYYY-MM-DD", times as "HH:MM".

pub(crate) mod date {
    use chrono::NaiveDate;
    use serde::Serializer;

    pub(crate) fn serialize<S: Serializer>(d: &NaiveDate, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&d.format("%Y-%m-%d"))
    }
}

pub(crate) mod opt_date {
    use chrono::NaiveDate;
    use serde::Serializer;

    pub(crate) fn serialize<S: Serializer>(d: &Option<NaiveDate>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.collect_str(&d.format("%Y-%m-%d")),
            None => s.serialize_none(),
        }
    }
}

pub(crate) mod opt_time {
    use chrono::NaiveTime;
    use serde::Serializer;

    pub(crate) fn serialize<S: Serializer>(t: &Option<NaiveTime>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.collect_str(&t.format("%H:%M")),
            None => s.serialize_none(),
        }
    }
}
