//! Reading a PromptPay QR payload (EMVCo merchant-presented mode) back,
//! for the suite and the browser tests: written from the EMVCo layout, not
//! from the service's code, so that the two check each other.

use std::collections::BTreeMap;

/// CRC-16/CCITT-FALSE (polynomial 0x1021, initial 0xFFFF), bit by bit.
pub fn crc16(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0xFFFF;
    for byte in bytes {
        crc ^= u16::from(*byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The fields of one level, in order: two-digit tag, two-digit length,
/// value.
pub fn fields(payload: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut rest = payload;
    while !rest.is_empty() {
        let head = rest
            .get(..4)
            .ok_or_else(|| format!("a field is cut short at {rest:?}"))?;
        let len: usize = head[2..]
            .parse()
            .map_err(|_| format!("no two-digit length in {head:?}"))?;
        let value = rest
            .get(4..4 + len)
            .ok_or_else(|| format!("field {} runs past the end", &head[..2]))?;
        out.push((head[..2].to_string(), value.to_string()));
        rest = &rest[4 + len..];
    }
    Ok(out)
}

/// What a payload must say to pay `amount` (as written, e.g. `500.00`) to
/// PromptPay ID `id` (a tax number, or a mobile number as `0` and nine
/// digits) with `reference` as its reference label.
pub fn check(payload: &str, amount: &str, id: &str, reference: &str) -> Result<(), String> {
    let top = fields(payload)?;
    let tags: Vec<&str> = top.iter().map(|(t, _)| t.as_str()).collect();
    if tags != ["00", "01", "29", "53", "54", "58", "62", "63"] {
        return Err(format!("fields {tags:?} in {payload}"));
    }
    let value = |tag: &str| {
        top.iter()
            .find(|(t, _)| t == tag)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let want = |tag: &str, expected: &str, what: &str| {
        let got = value(tag);
        (got == expected)
            .then_some(())
            .ok_or_else(|| format!("{what} (tag {tag}) is {got:?}, not {expected:?}"))
    };
    want("00", "01", "the payload format indicator")?;
    want("01", "12", "the point of initiation (12: for one payment)")?;
    want("53", "764", "the currency (THB)")?;
    want("54", amount, "the amount")?;
    want("58", "TH", "the country")?;
    let account: BTreeMap<String, String> = fields(&value("29"))?.into_iter().collect();
    if account.get("00").map(String::as_str) != Some("A000000677010111") {
        return Err(format!("not PromptPay's application id: {account:?}"));
    }
    let expected_id = match id.strip_prefix('0') {
        Some(nine) if id.len() == 10 => ("01", format!("0066{nine}")),
        _ => ("02", id.to_string()),
    };
    if account.get(expected_id.0) != Some(&expected_id.1) {
        return Err(format!("the account is {account:?}, not {expected_id:?}"));
    }
    let additional: BTreeMap<String, String> = fields(&value("62"))?.into_iter().collect();
    if additional.get("05").map(String::as_str) != Some(reference) {
        return Err(format!(
            "the reference label is {additional:?}, not {reference:?}"
        ));
    }
    let body = &payload[..payload.len() - 4];
    let crc = format!("{:04X}", crc16(body.as_bytes()));
    if !body.ends_with("6304") || value("63") != crc {
        return Err(format!("the CRC is {:?}, not {crc}", value("63")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crc_is_ccitt_false() {
        assert_eq!(crc16(b"123456789"), 0x29B1);
    }

    #[test]
    fn a_field_cut_short_is_an_error_not_a_panic() {
        assert!(fields("0002").is_err());
        assert!(fields("00x201").is_err());
        assert!(fields("000201").is_ok());
    }
}
