use super::*;

#[test]
fn names_descriptors() {
    assert_eq!(describe_descr("<i8"), "dtype '<i8' (int64)");
    assert_eq!(describe_descr("|b1"), "dtype '|b1' (bool)");
    assert_eq!(describe_descr("<U3"), "dtype '<U3'");
    assert_eq!(fmt_shape(&[3]), "(3,)");
    assert_eq!(fmt_shape(&[2, 3]), "(2, 3)");
}

/// A format-1.0 header line for `dict`, padded as NumPy pads it.
fn header_line(dict: &str) -> Vec<u8> {
    let mut text = dict.to_string();
    while (10 + text.len() + 1) % 64 != 0 {
        text.push(' ');
    }
    text.push('\n');
    text.into_bytes()
}

fn parsed(dict: &str) -> Result<(DType, u64, Vec<usize>), String> {
    parse_header(&header_line(dict), 1).map_err(|e| match e {
        HeaderError::Invalid(m) => format!("invalid: {m}"),
        HeaderError::Unsupported(m) => format!("unsupported: {m}"),
    })
}

/// What the readers refuse, the header check refuses first (cases the fuzz target
/// `npy_read` found, or that lie next to them).
#[test]
fn header_rules_match_the_reader() {
    let ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
    assert_eq!(parsed(ok), Ok((DType::F32, 4, vec![3, 4])));
    let be = "{'descr': '>f8', 'fortran_order': True, 'shape': (5,), }";
    assert_eq!(parsed(be), Ok((DType::F64, 8, vec![5])));
    for (dict, why) in [
        ("{'descr': '<f4', 'shape': (3, 4), }", "needs the keys"),
        (
            "{'descr': '<f4', 'fo2tran_order': False, 'shape': (3, 4), }",
            "unknown key",
        ),
        (
            "{'descr': '<f4', 'fortran_order': 0, 'shape': (3, 4), }",
            "has the value",
        ),
        (
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3), }",
            "cannot parse",
        ),
        (
            "{'descr': '<f4', 'fortran_order': False, 'shape': (-3, 4), }",
            "has the value",
        ),
        (
            "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
            "twice",
        ),
        (
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } \r",
            "cannot parse",
        ),
        ("['descr', '<f4']", "not a dictionary"),
    ] {
        let got = parsed(dict).unwrap_err();
        assert!(
            got.starts_with("invalid: ") && got.contains(why),
            "{dict}: {got}"
        );
    }
    let ints = "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }";
    assert_eq!(
        parsed(ints).unwrap_err(),
        "unsupported: holds dtype '<i8' (int64), expected f32 or f64"
    );
    // No newline at the end; non-ASCII text in a version 1 header.
    let mut cut = header_line(ok);
    cut.pop();
    assert!(matches!(
        parse_header(&cut, 1),
        Err(HeaderError::Invalid(_))
    ));
    let accent = header_line("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'é': 1}");
    assert!(matches!(
        parse_header(&accent, 1),
        Err(HeaderError::Invalid(_))
    ));
}

/// Found by the `npy_read` fuzz target: brackets nested 24 deep kept py_literal's
/// backtracking parser busy for a minute. The parser's work is bounded now, so a
/// header nested far deeper is refused at once; every header of ordinary content up
/// to the length limit still fits the budget.
#[test]
fn parser_work_is_bounded_and_ordinary_headers_fit_the_budget() {
    let deep = format!(
        "{{'descr': {}'<f4'{}, 'fortran_order': False, 'shape': (3,), }}",
        "[".repeat(60),
        "]".repeat(60)
    );
    let got = parsed(&deep).unwrap_err();
    assert!(got.contains("cannot parse"), "{got}");
    // The fuzzer's own header (fuzz/seeds/npy_read/found_timeout_nested_brackets.npy).
    let mut found = b"[".repeat(24);
    found.extend_from_slice(b"r':<f', 'fortran_orer': ");
    found.extend_from_slice(&[0x0c; 24]);
    found.extend_from_slice(format!("Fa{:21}\n", "").as_bytes());
    assert_eq!(found.len(), 96);
    assert!(matches!(
        parse_header(&found, 1),
        Err(HeaderError::Invalid(m)) if m.contains("cannot parse")
    ));
    // Ordinary content at the length limit: 64 dimensions (NumPy's most) padded
    // with spaces to 10,000 bytes, and a structured dtype of 120 fields.
    let dims = vec!["1"; 64].join(", ");
    let wide = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({dims}), }}");
    let mut line = format!("{wide:<9999}").into_bytes();
    line.push(b'\n');
    assert_eq!(line.len() as u64, MAX_HEADER_LEN);
    assert_eq!(
        parse_header(&line, 1).ok().map(|(_, _, shape)| shape),
        Some(vec![1; 64])
    );
    let fields: Vec<String> = (0..120)
        .map(|i| format!("('f{i}', '<f4', (2, 3))"))
        .collect();
    let structured = format!(
        "{{'descr': [{}], 'fortran_order': False, 'shape': (3,), }}",
        fields.join(", ")
    );
    assert!(structured.len() < MAX_HEADER_LEN as usize);
    assert_eq!(
        parsed(&structured).unwrap_err(),
        "unsupported: structured dtypes are not supported"
    );
}

/// NumPy's limit on the header's length, with the length named in the message.
#[test]
fn headers_over_the_length_limit_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.npy");
    let dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";
    let line = header_line(&format!("{dict:<10100}"));
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(line.len() as u16).to_le_bytes());
    bytes.extend_from_slice(&line);
    bytes.extend_from_slice(&1.0f32.to_le_bytes());
    std::fs::write(&p, bytes).unwrap();
    let e = header(&p).unwrap_err();
    assert!(
        e.message.contains(&format!("is {} bytes long", line.len())),
        "{}",
        e.message
    );
}

/// A zero length does not excuse the other lengths from fitting ndarray's limits.
#[test]
fn a_zero_length_beside_a_huge_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.npy");
    let dict = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': (0, {}), }}",
        usize::MAX / 2
    );
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    let line = header_line(&dict);
    bytes.extend_from_slice(&(line.len() as u16).to_le_bytes());
    bytes.extend_from_slice(&line);
    std::fs::write(&p, bytes).unwrap();
    let e = header(&p).unwrap_err();
    assert!(e.message.contains("overflows"), "{}", e.message);
}

/// A bounded fuzz of the input path: random bytes, and valid files truncated or with
/// bytes overwritten (header and data alike), must give `Ok` or one clear error:
/// never a panic, never an allocation sized by a lying header.
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn valid_npy(dir: &Path) -> Vec<u8> {
        let a = ndarray::Array2::<f32>::from_shape_fn((3, 5), |(i, j)| (i * 5 + j) as f32);
        let p = dir.join("valid.npy");
        ndarray_npy::write_npy(&p, &a).unwrap();
        std::fs::read(&p).unwrap()
    }

    fn exercise(bytes: &[u8]) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.npy");
        std::fs::write(&p, bytes).unwrap();
        let _ = header(&p);
        let _ = read_matrix::<f32>(&p, false);
        let _ = read_matrix::<f64>(&p, true);
        let _ = read_vector::<f32>(&p);
        let _ = read_matrix_f64(&p);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            exercise(&bytes);
        }

        #[test]
        fn damaged_valid_files_never_panic(
            cut in 0usize..200,
            edits in proptest::collection::vec((0usize..200, any::<u8>()), 0..6),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut bytes = valid_npy(dir.path());
            for (at, b) in edits {
                let n = bytes.len();
                bytes[at % n] = b;
            }
            bytes.truncate(cut.min(bytes.len()));
            exercise(&bytes);
        }
    }
}
