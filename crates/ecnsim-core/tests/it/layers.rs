//! The core's modules form layers that only point down: no import circle.
//!
//! Reads the crate's sources, takes every `crate::<module>` path outside test
//! code as an edge from the file's top-level module to that module, and fails
//! with the circle it finds. The layers, bottom up (the README's Layout):
//! units and ids; scenario, profiles and results; TCP, queues, links, nodes,
//! scheduler; `flow` (connections and endpoints); `app`; `stats`; `sim`;
//! then what reads a simulation (`collect`, `memory`) and what builds one
//! (`queue_resolve`, `validate`, `builder`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Source files under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source directory") {
        let path = entry.expect("readable entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `text` without test code: each `#[cfg(test)]` item (a `mod x;` line, or an
/// item whose braces are skipped to their close).
fn without_tests(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "#[cfg(test)]" {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let mut depth = 0i64;
        let mut opened = false;
        for item in lines.by_ref() {
            let code = item.split("//").next().unwrap_or("");
            depth += code.matches('{').count() as i64 - code.matches('}').count() as i64;
            opened |= code.contains('{');
            if (opened && depth <= 0) || (!opened && code.trim_end().ends_with(';')) {
                break;
            }
        }
    }
    out
}

/// The modules `text` names as `crate::<module>`, comments excluded.
fn crate_refs(text: &str) -> BTreeSet<String> {
    let mut refs = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                refs.insert(name);
            }
        }
    }
    refs
}

/// Files that are only test code: `#[cfg(test)] mod NAME;` in their parent.
fn test_only_files(files: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for f in files {
        let text = std::fs::read_to_string(f).expect("readable source");
        let dir = if f.file_name().is_some_and(|n| n == "mod.rs" || n == "lib.rs") {
            f.parent().expect("a parent").to_path_buf()
        } else {
            f.with_extension("")
        };
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            if line.trim() == "#[cfg(test)]" {
                if let Some(next) = lines.peek() {
                    let next = next.trim();
                    if let Some(name) = next.strip_prefix("mod ").and_then(|n| n.strip_suffix(';')) {
                        out.insert(dir.join(format!("{name}.rs")));
                        out.insert(dir.join(name).join("mod.rs"));
                    }
                }
            }
        }
    }
    out
}

/// Module graph: top-level module -> the top-level modules it uses.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let tests = test_only_files(&files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(src).expect("under src");
        let top = rel.components().next().expect("a component").as_os_str().to_string_lossy();
        let top = top.trim_end_matches(".rs").to_string();
        if top == "lib" {
            continue;
        }
        let node = graph.entry(top.clone()).or_default();
        if tests.contains(f) {
            continue;
        }
        let text = std::fs::read_to_string(f).expect("readable source");
        node.extend(crate_refs(&without_tests(&text)).into_iter().filter(|m| *m != top));
    }
    let names: BTreeSet<String> = graph.keys().cloned().collect();
    for refs in graph.values_mut() {
        refs.retain(|m| names.contains(m));
    }
    graph
}

/// A circle through `start`, if there is one (depth-first search).
fn circle_from(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    fn visit(
        graph: &BTreeMap<String, BTreeSet<String>>,
        start: &str,
        at: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in &graph[at] {
            if next == start {
                path.push(next.clone());
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if visit(graph, start, next, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.to_string()];
    let mut seen = BTreeSet::new();
    visit(graph, start, start, &mut path, &mut seen).then_some(path)
}

#[test]
fn core_modules_have_no_import_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph(&src);
    assert!(graph.contains_key("sim") && graph.contains_key("app"), "module graph read: {graph:?}");
    assert!(graph["app"].contains("flow"), "the reader sees app -> flow: {:?}", graph["app"]);
    let circles: Vec<String> = graph.keys().filter_map(|m| circle_from(&graph, m)).map(|c| c.join(" -> ")).collect();
    assert!(circles.is_empty(), "import circles in ecnsim-core:\n{}", circles.join("\n"));
}

#[test]
fn the_reader_finds_a_circle_when_there_is_one() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.insert("a".into(), ["b".to_string()].into());
    graph.insert("b".into(), ["c".to_string()].into());
    graph.insert("c".into(), ["a".to_string()].into());
    graph.insert("d".into(), ["a".to_string()].into());
    assert_eq!(circle_from(&graph, "a"), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    assert_eq!(circle_from(&graph, "d"), None);
    assert_eq!(
        crate_refs("use crate::sim::X; // crate::app\nlet y = crate::flow::Z;"),
        ["flow", "sim"].map(String::from).into()
    );
    let text = "use crate::a::X;\n#[cfg(test)]\nmod t;\n#[cfg(test)]\nfn f() {\n    crate::b::g();\n}\nuse crate::c::Y;\n#[cfg(test)]\nmod tests {\n    use crate::d::Z;\n}\n";
    assert_eq!(crate_refs(&without_tests(text)), ["a", "c"].map(String::from).into());
}
