//! docs/variants.md is the variant tables as the backends declare them: regenerate it
//! with `NDGPU_BLESS=1 cargo test -p ndgpu --test docs` after changing a table.

#[test]
fn docs_variants_md_is_the_backends_tables() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/variants.md");
    let want = ndgpu::variants_markdown();
    if std::env::var_os("NDGPU_BLESS").is_some() {
        std::fs::write(path, &want).unwrap();
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        have == want,
        "docs/variants.md differs from the backends' tables: run \
         NDGPU_BLESS=1 cargo test -p ndgpu --test docs"
    );
    // Every row of every backend is in it.
    for b in ndgpu::compiled_in() {
        assert!(want.contains(&format!("## `{b}`")), "{b}");
    }
}

/// The repository's root.
fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// GitHub's anchor of a heading: lowercase, spaces to hyphens, punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every relative link of the README and of docs/*.md names a file that exists, and an
/// anchor into a Markdown file names one of its headings.
#[test]
fn relative_links_in_the_docs_resolve() {
    let root = root();
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for (i, _) in text.match_indices("](") {
            let rest = &text[i + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = &rest[..end];
            if target.contains("://") || target.is_empty() || target.contains(' ') {
                continue;
            }
            let (file, fragment) = target.split_once('#').unwrap_or((target, ""));
            let path = match file {
                "" => page.clone(),
                f => page.parent().unwrap().join(f),
            };
            assert!(
                path.exists(),
                "{}: link to {target}: no such file",
                page.display()
            );
            if !fragment.is_empty() {
                let linked = std::fs::read_to_string(&path).unwrap();
                let found = linked
                    .lines()
                    .filter_map(|l| l.strip_prefix('#'))
                    .any(|h| anchor(h.trim_start_matches('#')) == fragment);
                assert!(
                    found,
                    "{}: link to {target}: no such heading",
                    page.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} relative links found");
}

/// The README leads with a quick start: install, make an input, run.
#[test]
fn the_readme_starts_with_a_quick_start() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme
        .find("## Quick start")
        .expect("a Quick start section");
    let first_section = readme.find("\n## ").unwrap();
    assert_eq!(start, first_section + 1, "Quick start is the first section");
    let quick = &readme[start..];
    let install = quick
        .find("cargo install --path crates/cli --locked")
        .unwrap();
    let random = quick.find("ndgpu random ").unwrap();
    let run = quick.find("ndgpu run kmeans").unwrap();
    assert!(install < random && random < run);
}
