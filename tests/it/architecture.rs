//! The module graph's rules, read from the `crate::…` paths of the library's sources (the
//! unit-test modules left out): the query side imports neither method nor the generator,
//! neither method imports the other, the value type and the ground floor import no chess,
//! nothing imports the command line, and no two top-level modules import each other
//! (directly or around a cycle).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The top-level module of each source file of `src/` and the top-level modules its code
/// names through `crate::` (the binary's own modules, `main.rs` and `lib.rs`, left out).
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut files = vec![src.clone()];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = path.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let top = first.trim_end_matches(".rs").to_string();
        if top == "lib" || top == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let uses = graph.entry(top.clone()).or_default();
        for name in crate_paths(&code_of(&text)) {
            if name != top {
                uses.insert(name);
            }
        }
    }
    graph
}

/// `text` without comments and without its unit tests (a `#[cfg(test)]` module, which may
/// use anything).
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            // Skip the module: up to the line that closes it at its own indentation.
            let indent = line.len() - trimmed.len();
            let close = format!("{}}}", " ".repeat(indent));
            for l in lines.by_ref() {
                if l == close {
                    break;
                }
            }
            continue;
        }
        let code = trimmed.split("//").next().unwrap_or("");
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// The top-level modules `code` names: `crate::name` and the first segment of each entry
/// of a grouped `use crate::{a::b, c}`.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level entries of the group: split at commas outside nested braces.
            let mut depth = 0;
            let mut entry = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        names.insert(ident(entry.trim()));
                        entry.clear();
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 || c != '{' {
                    entry.push(c);
                }
            }
            names.insert(ident(entry.trim()));
        } else {
            names.insert(ident(rest));
        }
    }
    names.retain(|n| !n.is_empty() && n != "self");
    names
}

/// The modules of `graph` that `module` imports among `forbidden`.
fn imports_of<'a>(
    graph: &'a BTreeMap<String, BTreeSet<String>>,
    module: &str,
    forbidden: &[&str],
) -> Vec<&'a String> {
    graph
        .get(module)
        .unwrap_or_else(|| panic!("no module {module} in src/"))
        .iter()
        .filter(|n| forbidden.contains(&n.as_str()))
        .collect()
}

/// The methods and what drives them.
const GENERATION: [&str; 3] = ["iterate", "solve", "generate"];

/// Everything that knows the game (boards, pieces, moves, positions, tables).
const CHESS: [&str; 18] = [
    "geometry",
    "material",
    "position",
    "fen",
    "rules",
    "index",
    "graph",
    "certificate",
    "boundary",
    "table",
    "probe",
    "verify",
    "chips",
    "play",
    "iterate",
    "solve",
    "generate",
    "value",
];

#[test]
fn the_query_side_imports_neither_method_nor_the_generator() {
    let graph = module_graph();
    for module in ["table", "probe", "verify", "boundary", "certificate"] {
        let bad = imports_of(&graph, module, &GENERATION);
        assert!(bad.is_empty(), "{module} imports {bad:?}");
    }
}

#[test]
fn neither_method_imports_the_other() {
    let graph = module_graph();
    let bad = imports_of(&graph, "iterate", &["solve", "generate"]);
    assert!(bad.is_empty(), "iterate imports {bad:?}");
    let bad = imports_of(&graph, "solve", &["iterate", "generate"]);
    assert!(bad.is_empty(), "solve imports {bad:?}");
}

#[test]
fn the_value_type_and_the_ground_floor_import_no_chess() {
    let graph = module_graph();
    for module in [
        "value",
        "error",
        "atomic",
        "container",
        "dirlock",
        "progress",
        "resources",
    ] {
        let bad: Vec<_> = imports_of(&graph, module, &CHESS)
            .into_iter()
            .filter(|n| n.as_str() != module)
            .collect();
        assert!(bad.is_empty(), "{module} imports {bad:?}");
    }
}

#[test]
fn nothing_in_the_library_imports_the_command_line() {
    let graph = module_graph();
    for (module, uses) in &graph {
        if ["cli", "server", "svg"].contains(&module.as_str()) {
            continue;
        }
        for shell in ["cli", "server", "svg"] {
            assert!(!uses.contains(shell), "{module} imports {shell}");
        }
    }
}

#[test]
fn no_two_modules_import_each_other() {
    let graph = module_graph();
    // A depth-first search for a cycle; the path found is the message.
    fn visit(
        graph: &BTreeMap<String, BTreeSet<String>>,
        node: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if let Some(at) = path.iter().position(|n| n == node) {
            panic!("a cycle: {} -> {node}", path[at..].join(" -> "));
        }
        if done.contains(node) {
            return;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            visit(graph, next, path, done);
        }
        path.pop();
        done.insert(node.to_string());
    }
    let mut done = BTreeSet::new();
    for module in graph.keys() {
        visit(&graph, module, &mut Vec::new(), &mut done);
    }
}

/// The reader of `use` lines itself: it finds plain and grouped paths and skips comments
/// and unit tests, so the rules above cannot pass by reading nothing.
#[test]
fn the_reader_finds_what_a_module_imports() {
    let code = code_of(
        "use crate::value::Value;\n\
         use crate::{graph::Graph, index::{self, Index}, self};\n\
         // use crate::solve;\n\
         fn f() { crate::table::open(); }\n\
         #[cfg(test)]\n\
         mod tests {\n    use crate::generate;\n}\n\
         fn g() {}\n",
    );
    let found: Vec<String> = crate_paths(&code).into_iter().collect();
    assert_eq!(found, ["graph", "index", "table", "value"]);
    let graph = module_graph();
    assert!(graph["generate"].contains("solve") && graph["generate"].contains("iterate"));
    assert!(graph["verify"].contains("table") && graph["probe"].contains("table"));
}
