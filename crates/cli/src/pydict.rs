//! A parser for the header of a `.npy` file: a Python dict literal such as
//! `{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }`. Only what that
//! header can hold is understood; anything else is `None`, never a panic.

/// The values the header dictionary can hold that matter here.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(String),
    Bool(bool),
    Tuple(Vec<usize>),
    Other,
}

/// Parses `{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }`: a Python
/// dict literal of strings, booleans and tuples of integers. Anything else
/// (a list-valued structured `descr`) becomes [`Value::Other`] when it is a list.
pub fn parse_dict(s: &str) -> Option<Vec<(String, Value)>> {
    let mut p = Parser {
        s: s.as_bytes(),
        i: 0,
    };
    p.expect(b'{')?;
    let mut out = Vec::new();
    loop {
        p.ws();
        if p.eat(b'}') {
            break;
        }
        let key = p.string()?;
        p.ws();
        p.expect(b':')?;
        p.ws();
        let value = p.value()?;
        out.push((key, value));
        p.ws();
        if !p.eat(b',') {
            p.ws();
            p.expect(b'}')?;
            break;
        }
    }
    p.ws();
    (p.i == p.s.len()).then_some(out)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        if hit {
            self.i += 1;
        }
        hit
    }
    fn expect(&mut self, c: u8) -> Option<()> {
        self.eat(c).then_some(())
    }
    fn string(&mut self) -> Option<String> {
        let quote = self.peek().filter(|&q| q == b'\'' || q == b'"')?;
        self.i += 1;
        let start = self.i;
        while self.peek()? != quote {
            self.i += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.i])
            .ok()?
            .to_string();
        self.i += 1;
        Some(text)
    }
    fn word(&mut self) -> &[u8] {
        let start = self.i;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            self.i += 1;
        }
        &self.s[start..self.i]
    }
    fn value(&mut self) -> Option<Value> {
        match self.peek()? {
            b'\'' | b'"' => self.string().map(Value::Str),
            b'(' => {
                self.i += 1;
                let mut dims = Vec::new();
                loop {
                    self.ws();
                    if self.eat(b')') {
                        return Some(Value::Tuple(dims));
                    }
                    let digits = std::str::from_utf8(self.word()).ok()?;
                    // A trailing `L` is how Python 2 wrote long integers.
                    dims.push(digits.trim_end_matches('L').parse().ok()?);
                    self.ws();
                    if !self.eat(b',') {
                        self.ws();
                        self.expect(b')')?;
                        return Some(Value::Tuple(dims));
                    }
                }
            }
            b'[' => {
                // A structured dtype's list of fields: skip it, brackets balanced.
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'[' | b'(' => depth += 1,
                        b']' | b')' => depth -= 1,
                        b'\'' | b'"' => {
                            self.string()?;
                            continue;
                        }
                        _ => {}
                    }
                    self.i += 1;
                    if depth == 0 {
                        return Some(Value::Other);
                    }
                }
            }
            _ => match self.word() {
                b"True" => Some(Value::Bool(true)),
                b"False" => Some(Value::Bool(false)),
                _ => None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_numpy_headers() {
        let d = parse_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }").unwrap();
        assert_eq!(d[0], ("descr".into(), Value::Str("<f8".into())));
        assert_eq!(d[1], ("fortran_order".into(), Value::Bool(false)));
        assert_eq!(d[2], ("shape".into(), Value::Tuple(vec![3, 4])));
        let d = parse_dict("{'descr':'<f4','fortran_order':True,'shape':(5,)}").unwrap();
        assert_eq!(d[2].1, Value::Tuple(vec![5]));
        let d = parse_dict("{'descr': [('a', '<f4'), ('b', '<i8')], 'shape': ()}").unwrap();
        assert_eq!(d[0].1, Value::Other);
        assert_eq!(d[1].1, Value::Tuple(vec![]));
    }

    #[test]
    fn rejects_garbage() {
        for s in [
            "",
            "{",
            "{'descr': }",
            "{'shape': (3, x)}",
            "{'a': 1} trailing",
            "{'shape': (3,",
        ] {
            assert!(parse_dict(s).is_none(), "{s:?}");
        }
    }
}
