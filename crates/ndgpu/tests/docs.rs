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
