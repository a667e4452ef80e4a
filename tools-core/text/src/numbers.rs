//! Numbers as the model reads them in messages (`1,234,567 characters`), the way Hermes
//! formats them (Python's `f"{n:,}"`).

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_of_three_from_the_right() {
        let cases = [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (2200, "2,200"),
            (1_234_567, "1,234,567"),
            (u64::MAX, "18,446,744,073,709,551,615"),
        ];
        for (n, want) in cases {
            assert_eq!(thousands(n), want, "{n}");
        }
    }
}
