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

fn parsed(dict: &str) -> Result<(Stored, Vec<usize>, bool), String> {
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
    assert_eq!(parsed(ok), Ok((Stored::F32, vec![3, 4], false)));
    let be = "{'descr': '>f8', 'fortran_order': True, 'shape': (5,), }";
    assert_eq!(parsed(be), Ok((Stored::F64, vec![5], true)));
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
    assert_eq!(parsed(ints), Ok((Stored::I64, vec![2], false)));
    let complex = "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }";
    let e = parsed(complex).unwrap_err();
    assert!(
        e.starts_with("unsupported: holds dtype '<c8' (complex64), which the tool does not read"),
        "{e}"
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
        parse_header(&line, 1).ok().map(|(_, shape, _)| shape),
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
        #![proptest_config(ndgpu_conformance::strategies::seeded(ProptestConfig {
            cases: 256,
            failure_persistence: None,
            ..ProptestConfig::default()
        }))]

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

/// Integer and bool files are read as floats, value by value, whichever float type is
/// asked for; their header says they compute in f64 by default (as numpy.linalg does).
#[test]
fn integer_and_bool_files_are_converted() {
    fn check<A>(dir: &tempfile::TempDir, name: &str, a: ndarray::Array2<A>, stored: Stored)
    where
        A: ndarray_npy::WritableElement + Copy + Into<f64>,
    {
        let p = dir.path().join(name);
        ndarray_npy::write_npy(&p, &a).unwrap();
        let h = header(&p).unwrap();
        assert_eq!((h.stored, h.dtype), (stored, DType::F64), "{name}");
        let want = a.mapv(Into::<f64>::into);
        assert_eq!(read_matrix::<f64>(&p, false).unwrap(), want, "{name}");
        assert_eq!(
            read_matrix::<f32>(&p, false).unwrap(),
            want.mapv(|x| x as f32),
            "{name}"
        );
    }
    let d = tempfile::tempdir().unwrap();
    let base = ndarray::array![[0i64, -2, 3], [4, 5, -6]];
    check(&d, "i8.npy", base.mapv(|x| x as i8), Stored::I8);
    check(&d, "i16.npy", base.mapv(|x| x as i16), Stored::I16);
    check(&d, "i32.npy", base.mapv(|x| x as i32), Stored::I32);
    check(
        &d,
        "u8.npy",
        base.mapv(|x| x.unsigned_abs() as u8),
        Stored::U8,
    );
    check(
        &d,
        "u16.npy",
        base.mapv(|x| x.unsigned_abs() as u16),
        Stored::U16,
    );
    check(
        &d,
        "u32.npy",
        base.mapv(|x| x.unsigned_abs() as u32),
        Stored::U32,
    );
    // i64 and u64 have no lossless Into<f64>: checked by value.
    for (name, stored) in [("i64.npy", Stored::I64), ("u64.npy", Stored::U64)] {
        let p = d.path().join(name);
        if stored == Stored::I64 {
            ndarray_npy::write_npy(&p, &base).unwrap();
        } else {
            ndarray_npy::write_npy(&p, &base.mapv(|x| x.unsigned_abs())).unwrap();
        }
        assert_eq!(header(&p).unwrap().stored, stored);
        let want = if stored == Stored::I64 {
            base.mapv(|x| x as f64)
        } else {
            base.mapv(|x| x.unsigned_abs() as f64)
        };
        assert_eq!(read_matrix::<f64>(&p, false).unwrap(), want);
    }
    // bool, C and Fortran order, and a byte other than 0 or 1 (NumPy reads it as true).
    let c = raw_file(
        "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 2), }",
        &[1, 0, 0, 2],
    );
    let f = raw_file(
        "{'descr': '|b1', 'fortran_order': True, 'shape': (2, 2), }",
        &[1, 1, 0, 0],
    );
    for (name, bytes, want) in [
        ("c.npy", c, ndarray::array![[1.0, 0.0], [0.0, 1.0]]),
        ("f.npy", f, ndarray::array![[1.0, 0.0], [1.0, 0.0]]),
    ] {
        let p = d.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        assert_eq!(header(&p).unwrap().stored, Stored::Bool);
        assert_eq!(read_matrix::<f64>(&p, false).unwrap(), want, "{name}");
    }
    let v = d.path().join("v.npy");
    ndarray_npy::write_npy(&v, &ndarray::array![true, false, true]).unwrap();
    assert_eq!(
        read_vector::<f32>(&v).unwrap(),
        ndarray::array![1.0f32, 0.0, 1.0]
    );
}
