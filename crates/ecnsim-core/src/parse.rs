//! Parse-error quality for [`crate::spec`]: every error names the deepest
//! field that can be named, in words a scenario author uses.
//!
//! serde reports errors well for plain structs, but three things need help:
//! - **Internally tagged enums** (`queue = { type = "red", ... }`, models,
//!   distributions) are buffered before their variant is known, so serde's
//!   path stops at the table. [`refine`] finds the field inside the table
//!   from the document itself: the one value or key that the message quotes.
//! - **Arrays given for tables.** serde accepts a struct written as a
//!   sequence, field by field (`simulation = ["3s", "1s", 7]`), and an
//!   internally tagged enum from an array whose first item is the tag.
//!   [`check_tables`] compares the document with the parsed scenario and
//!   refuses an array wherever the scenario has a table.
//! - **Errors of the TOML parser itself** (an integer beyond 64 bits, nesting
//!   too deep) come before deserialization, without a path; [`locate_toml`]
//!   recovers the key from the error's position.
//!
//! Messages are reworded to name no Rust type ([`humanize`]).

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A document as written (TOML or JSON), for finding fields by path.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tree {
    Table(Vec<(String, Tree)>),
    Array(Vec<Tree>),
    Str(String),
    Int(i128),
    Float(f64),
    Bool(bool),
    Other,
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Tree;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Tree, E> {
                Ok(Tree::Bool(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Tree, E> {
                Ok(Tree::Int(v.into()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Tree, E> {
                Ok(Tree::Int(v.into()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Tree, E> {
                Ok(Tree::Float(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Tree, E> {
                Ok(Tree::Str(v.to_owned()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Tree, E> {
                Ok(Tree::Other)
            }
            fn visit_none<E: de::Error>(self) -> Result<Tree, E> {
                Ok(Tree::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
                let mut items = Vec::new();
                while let Some(t) = seq.next_element()? {
                    items.push(t);
                }
                Ok(Tree::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
                let mut items = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Tree>()? {
                    items.push((k, v));
                }
                Ok(Tree::Table(items))
            }
        }
        d.deserialize_any(V)
    }
}

impl Tree {
    /// The TOML document, if it parses.
    pub(crate) fn from_toml(text: &str) -> Option<Tree> {
        toml::from_str(text).ok()
    }
    /// The JSON document, if it parses.
    pub(crate) fn from_json(text: &str) -> Option<Tree> {
        serde_json::from_str(text).ok()
    }

    /// The value at `path` (`links[2].queue`), if there is one.
    fn at(&self, path: &str) -> Option<&Tree> {
        let mut node = self;
        for seg in segments(path)? {
            node = match (node, seg) {
                (Tree::Table(items), Seg::Key(k)) => &items.iter().find(|(key, _)| key == k)?.1,
                (Tree::Array(items), Seg::Index(i)) => items.get(i)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// The document as a JSON value (an integer beyond 64 bits as a float; what the
    /// reader could not hold as null), for parsing it again with one value changed.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Tree::Table(items) => Value::Object(items.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()),
            Tree::Array(items) => Value::Array(items.iter().map(Tree::to_json).collect()),
            Tree::Str(s) => Value::String(s.clone()),
            Tree::Int(v) => i64::try_from(*v)
                .map(Value::from)
                .or_else(|_| u64::try_from(*v).map(Value::from))
                .unwrap_or_else(|_| Value::from(*v as f64)),
            Tree::Float(v) => serde_json::Number::from_f64(*v).map_or(Value::Null, Value::Number),
            Tree::Bool(v) => Value::Bool(*v),
            Tree::Other => Value::Null,
        }
    }

    /// The document as a JSON value with the value at `path` replaced by the string `s`;
    /// `None` if `path` names no value.
    pub(crate) fn to_json_with_string_at(&self, path: &str, s: &str) -> Option<serde_json::Value> {
        let mut doc = self.to_json();
        let mut node = &mut doc;
        for seg in segments(path)? {
            node = match seg {
                Seg::Key(k) => node.as_object_mut()?.get_mut(k)?,
                Seg::Index(i) => node.as_array_mut()?.get_mut(i)?,
            };
        }
        *node = serde_json::Value::String(s.to_owned());
        Some(doc)
    }

    /// The value at `path` as serde's messages describe a value ("boolean `true`",
    /// "integer `1`", "an array"); `None` if `path` names no value.
    pub(crate) fn describe_at(&self, path: &str) -> Option<String> {
        Some(match self.at(path)? {
            Tree::Table(_) => "a table".to_owned(),
            Tree::Array(_) => "an array".to_owned(),
            Tree::Str(s) => format!("string {s:?}"),
            Tree::Int(v) => format!("integer `{v}`"),
            Tree::Float(v) => format!("floating point `{v}`"),
            Tree::Bool(v) => format!("boolean `{v}`"),
            Tree::Other => "a value of no known kind".to_owned(),
        })
    }

    /// `(relative path, how a message would quote it)` of every value and key below.
    fn quotable(&self, prefix: &str, out: &mut Vec<(String, Vec<String>)>) {
        match self {
            Tree::Table(items) => {
                for (k, v) in items {
                    let p = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    out.push((p.clone(), vec![format!("field `{k}`")]));
                    v.quotable(&p, out);
                }
            }
            Tree::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    v.quotable(&format!("{prefix}[{i}]"), out);
                }
            }
            Tree::Str(s) => out.push((prefix.to_owned(), vec![format!("{s:?}"), format!("variant `{s}`")])),
            Tree::Int(v) => out.push((prefix.to_owned(), vec![format!("integer `{v}`")])),
            Tree::Float(v) => out.push((prefix.to_owned(), vec![format!("floating point `{v}`"), format!("got {v}")])),
            Tree::Bool(v) => out.push((prefix.to_owned(), vec![format!("boolean `{v}`")])),
            Tree::Other => {}
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// `links[2].queue` as `[Key(links), Index(2), Key(queue)]`; `None` for `<root>`.
fn segments(path: &str) -> Option<Vec<Seg<'_>>> {
    if path == "<root>" || path.is_empty() {
        return Some(Vec::new());
    }
    let mut out = Vec::new();
    for part in path.split('.') {
        let (key, rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        if !key.is_empty() {
            out.push(Seg::Key(key));
        }
        for idx in rest.split('[').filter(|s| !s.is_empty()) {
            out.push(Seg::Index(idx.strip_suffix(']')?.parse().ok()?));
        }
    }
    Some(out)
}

/// `path` joined with the relative path `rel`.
fn join(path: &str, rel: &str) -> String {
    if path == "<root>" {
        rel.to_owned()
    } else if rel.starts_with('[') {
        format!("{path}{rel}")
    } else {
        format!("{path}.{rel}")
    }
}

/// The deepest path for an error serde reported at `path` with `msg`: the one
/// value or key below `path` that the message quotes, if exactly one does.
pub(crate) fn refine(tree: Option<&Tree>, path: &str, msg: &str) -> String {
    let Some(node) = tree.and_then(|t| t.at(path)) else { return path.to_owned() };
    if !matches!(node, Tree::Table(_) | Tree::Array(_)) {
        return path.to_owned();
    }
    let mut quoted = Vec::new();
    node.quotable("", &mut quoted);
    let hits: Vec<&String> =
        quoted.iter().filter(|(_, forms)| forms.iter().any(|f| msg.contains(f.as_str()))).map(|(p, _)| p).collect();
    match hits.as_slice() {
        [one] => join(path, one),
        _ => path.to_owned(),
    }
}

/// serde's message in a scenario author's words: no Rust type names (the
/// allowed values of a missing tag are added by [`crate::spec`], which knows them).
pub(crate) fn humanize(msg: &str) -> String {
    let mut m = msg.to_owned();
    // "expected struct LinkSpec" / "expected struct SimulationSpec with 5 elements".
    while let Some(i) = m.find("expected struct ") {
        let rest = &m[i + "expected struct ".len()..];
        let end = rest.find(|c: char| !c.is_alphanumeric() && c != '_').unwrap_or(rest.len());
        let mut tail = &rest[end..];
        if let Some(t) = tail.strip_prefix(" with ") {
            tail = t.find(" elements").map_or(tail, |j| &t[j + " elements".len()..]);
        }
        m = format!("{}expected a table{tail}", &m[..i]);
    }
    while let Some(i) = m.find("expected internally tagged enum ") {
        let rest = &m[i + "expected internally tagged enum ".len()..];
        let end = rest.find(|c: char| !c.is_alphanumeric() && c != '_').unwrap_or(rest.len());
        m = format!("{}expected a table with a `type` key{}", &m[..i], &rest[end..]);
    }
    for (from, to) in [
        ("invalid length", "wrong number of items:"),
        ("invalid type: sequence", "invalid type: array"),
        ("invalid type: map", "invalid type: table"),
        ("expected i64", "expected an integer"),
        ("expected u64", "expected an integer from 0 to 18446744073709551615"),
        ("expected u32", "expected an integer from 0 to 4294967295"),
        ("expected f64", "expected a number"),
        ("expected a sequence", "expected an array"),
        (
            "number too large to fit in target type",
            "integer out of range: TOML integers are at most 9223372036854775807",
        ),
        ("recursion limit exceeded", "nested too deeply"),
    ] {
        m = m.replace(from, to);
    }
    if m.starts_with("invalid type: floating point") && m.contains("expected an integer from 0") {
        // A whole number beyond the integers the reader holds (JSON above 2^64 - 1) arrives
        // as a float; a fraction (`seed = 2.5`, `mss = 1460.5`) is just not an integer.
        let value = m.split('`').nth(1).and_then(|v| v.parse::<f64>().ok());
        if value.is_some_and(|v| v.fract() == 0.0 && v.abs() >= 9.2e18) {
            m.push_str(" (an integer this large is read as a floating-point number)");
        }
    }
    m
}

/// The field a serde "missing field" message names.
pub(crate) fn missing_field(msg: &str) -> Option<&str> {
    msg.strip_prefix("missing field `").and_then(|r| r.split('`').next())
}

/// An array given where the scenario has a table (serde would have read it
/// positionally): the error naming it.
pub(crate) fn check_tables(input: &Tree, parsed: &serde_json::Value, path: &str) -> Result<(), (String, String)> {
    match (input, parsed) {
        (Tree::Array(items), serde_json::Value::Object(_)) => {
            let what = if items.is_empty() { "an empty array" } else { "an array" };
            Err((path.to_owned(), format!("expected a table, got {what}; write it as a table of named fields")))
        }
        (Tree::Table(items), serde_json::Value::Object(fields)) => {
            for (k, v) in items {
                if let Some(p) = fields.get(k) {
                    let child = if path == "<root>" { k.clone() } else { format!("{path}.{k}") };
                    check_tables(v, p, &child)?;
                }
            }
            Ok(())
        }
        (Tree::Array(items), serde_json::Value::Array(parsed)) => {
            for (i, (v, p)) in items.iter().zip(parsed).enumerate() {
                check_tables(v, p, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Units a time or a rate is written back with (the spec's display units).
const TIME_SUFFIXES: &[&str] = &["ns", "us", "ms", "s"];
const RATE_SUFFIXES: &[&str] = &["bps", "kbps", "Mbps", "Gbps"];

/// Whether `parsed` (a quantity as the spec writes it back, `"20s"`,
/// `"10bps"`) is a time or a rate, and which.
fn quantity_kind(parsed: &str) -> Option<&'static str> {
    let unit = parsed.trim_start_matches(|c: char| c.is_ascii_digit() || c == '-');
    if unit.len() == parsed.len() {
        return None;
    }
    if TIME_SUFFIXES.contains(&unit) {
        Some("time")
    } else if RATE_SUFFIXES.contains(&unit) {
        Some("rate")
    } else {
        None
    }
}

/// A scenario file must give every non-zero time and rate a unit: `delay = 20`
/// would be 20 seconds and `rate = 10` 10 bit/s, which nobody means. The
/// document (`input`) is compared with the parsed scenario written back
/// (`parsed`, where quantities are strings with units): a number in the
/// document where the scenario has a time or a rate is refused, naming the
/// field and the forms it accepts. Zero needs no unit.
pub(crate) fn check_units(input: &Tree, parsed: &serde_json::Value, path: &str) -> Result<(), (String, String)> {
    match (input, parsed) {
        (Tree::Table(items), serde_json::Value::Object(fields)) => {
            for (k, v) in items {
                if let Some(p) = fields.get(k) {
                    let child = if path == "<root>" { k.clone() } else { format!("{path}.{k}") };
                    check_units(v, p, &child)?;
                }
            }
            Ok(())
        }
        (Tree::Array(items), serde_json::Value::Array(parsed)) => {
            for (i, (v, p)) in items.iter().zip(parsed).enumerate() {
                check_units(v, p, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        (Tree::Int(_) | Tree::Float(_), serde_json::Value::String(value)) => {
            let number = match input {
                Tree::Int(0) => return Ok(()),
                Tree::Float(f) if *f == 0.0 => return Ok(()),
                Tree::Int(i) => i.to_string(),
                Tree::Float(f) => f.to_string(),
                _ => unreachable!(),
            };
            let key = path.rsplit(['.', '[']).next().unwrap_or(path);
            let msg = match quantity_kind(value) {
                Some("time") => format!(
                    "a time needs a unit: write {key} = \"{number}ms\" or \"{number}s\" \
                     (units: s, ms, us, ns, min); a bare {number} is ambiguous"
                ),
                Some(_) => format!(
                    "a rate needs a unit: write {key} = \"{number}Mbps\" or \"{number}bps\" \
                     (units: bps, kbps, Mbps, Gbps); a bare {number} is ambiguous"
                ),
                None => return Ok(()),
            };
            Err((path.to_owned(), msg))
        }
        _ => Ok(()),
    }
}

/// The key path of a TOML parser error at byte `start` of `text`, which the
/// parser itself reports without one: the value there is replaced by a marker
/// string and the document parsed again; failing that, the key written at
/// the start of the line, under its table header.
pub(crate) fn locate_toml(text: &str, start: usize, end: usize) -> Option<String> {
    const MARK: &str = "\"ecnsim-parse-marker-7f3a\"";
    let (start, end) = narrow_to_long_integer(text, start, end);
    if start <= end && end <= text.len() && text.is_char_boundary(start) && text.is_char_boundary(end) {
        let marked = format!("{}{MARK}{}", &text[..start], &text[end..]);
        if let Some(tree) = Tree::from_toml(&marked) {
            let mut found = Vec::new();
            tree.quotable("", &mut found);
            let want = MARK.to_owned();
            if let Some((p, _)) = found.iter().find(|(_, forms)| forms.contains(&want)) {
                return Some(p.clone());
            }
        }
    }
    line_key(text, start)
}

/// From `start` to the end of its line (or of `end`, if later), the first
/// integer of 19 or more digits: the one beyond 64 bits (the parser's span
/// covers one digit of it, or a whole inline table).
fn narrow_to_long_integer(text: &str, start: usize, end: usize) -> (usize, usize) {
    let line_end = text.get(start..).and_then(|t| t.find('\n')).map_or(text.len(), |i| start + i);
    let Some(region) = text.get(start..line_end.max(end)) else { return (start, end) };
    let bytes = region.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'.')) {
            let from = if i > 0 && matches!(bytes[i - 1], b'-' | b'+') { i - 1 } else { i };
            let mut j = i;
            while j < bytes.len() && (bytes[j].is_ascii_digit() || bytes[j] == b'_') {
                j += 1;
            }
            let digits = bytes[i..j].iter().filter(|b| b.is_ascii_digit()).count();
            let is_number_end = j == bytes.len() || !(bytes[j].is_ascii_alphanumeric() || bytes[j] == b'.');
            if digits >= 19 && is_number_end {
                return (start + from, start + j);
            }
            i = j;
        } else {
            i += 1;
        }
    }
    (start, end)
}

/// The key at the start of the line holding byte `at`, under the nearest table header above.
fn line_key(text: &str, at: usize) -> Option<String> {
    let at = at.min(text.len());
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..];
    let key = line.split('=').next()?.trim();
    if key.is_empty() || key.starts_with('[') || key.contains(['{', '[', '"', '\'']) {
        return None;
    }
    // The header: the last `[name]` or `[[name]]` line above, with the index of an array of tables.
    let above = &text[..line_start];
    let header = above.lines().rev().map(str::trim).find(|l| l.starts_with('['));
    Some(match header {
        Some(h) if h.starts_with("[[") => {
            let name = h.trim_matches(|c| c == '[' || c == ']').trim();
            let n = above.lines().filter(|l| l.trim() == h).count();
            format!("{name}[{}].{key}", n.saturating_sub(1))
        }
        Some(h) => format!("{}.{key}", h.trim_matches(|c| c == '[' || c == ']').trim()),
        None => key.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_into_keys_and_indices() {
        let tree = Tree::from_json(r#"{"links":[{"a":1},{"queue":{"type":"red","w_q":"x"}}]}"#).unwrap();
        assert_eq!(tree.at("links[1].queue.type"), Some(&Tree::Str("red".into())));
        assert_eq!(tree.at("links[2]"), None);
        assert_eq!(
            refine(Some(&tree), "links[1].queue", r#"invalid type: string "x", expected f64"#),
            "links[1].queue.w_q"
        );
        // Two candidates: keep the table.
        let tree = Tree::from_json(r#"{"q":{"a":"x","b":"x"}}"#).unwrap();
        assert_eq!(refine(Some(&tree), "q", r#"invalid type: string "x""#), "q");
    }

    #[test]
    fn messages_name_no_rust_type() {
        assert_eq!(
            humanize("invalid type: string \"x\", expected struct LinkSpec"),
            "invalid type: string \"x\", expected a table"
        );
        assert_eq!(
            humanize("invalid length 1, expected struct SimulationSpec with 5 elements"),
            "wrong number of items: 1, expected a table"
        );
        assert_eq!(
            humanize("invalid type: integer `5`, expected internally tagged enum DistSpec"),
            "invalid type: integer `5`, expected a table with a `type` key"
        );
        assert_eq!(missing_field("missing field `kind`"), Some("kind"));
    }

    #[test]
    fn only_a_whole_number_beyond_the_integers_is_said_to_be_too_large() {
        assert_eq!(
            humanize("invalid type: floating point `2.5`, expected u64"),
            "invalid type: floating point `2.5`, expected an integer from 0 to 18446744073709551615"
        );
        assert_eq!(
            humanize("invalid type: floating point `1460.5`, expected u32"),
            "invalid type: floating point `1460.5`, expected an integer from 0 to 4294967295"
        );
        assert_eq!(
            humanize("invalid type: floating point `18446744073709552000`, expected u64"),
            "invalid type: floating point `18446744073709552000`, expected an integer from 0 to \
             18446744073709551615 (an integer this large is read as a floating-point number)"
        );
    }
}
