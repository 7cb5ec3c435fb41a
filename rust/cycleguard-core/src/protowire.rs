//! The protobuf wire format, read strictly: the fields of one message as (number, value),
//! for `otlp_proto`. Anything the common well-formed case does not contain (groups, wire
//! types 6 and 7, overlong varints and tags, field number 0, a length past the end) is
//! [`Unusual`]: the caller then leaves the body to upb, whose verdict (an error, or a value
//! this reader is not sure to give the same way) is the reference.

/// The input is not the plain well-formed case: let the Python path (upb) decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unusual;

/// One field's value as the wire carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire<'a> {
    Varint(u64),
    Fixed64(u64),
    Len(&'a [u8]),
    Fixed32(u32),
}

impl<'a> Wire<'a> {
    /// The bytes of a length-delimited field (string, bytes, message); another wire type
    /// for such a field is unusual (upb would keep it as an unknown field).
    #[inline]
    pub fn len(self) -> Result<&'a [u8], Unusual> {
        match self {
            Wire::Len(b) => Ok(b),
            _ => Err(Unusual),
        }
    }

    /// A varint field (int64, uint32, bool, enum), unpacked.
    #[inline]
    pub fn varint(self) -> Result<u64, Unusual> {
        match self {
            Wire::Varint(v) => Ok(v),
            _ => Err(Unusual),
        }
    }

    /// A fixed64 or double field.
    #[inline]
    pub fn fixed64(self) -> Result<u64, Unusual> {
        match self {
            Wire::Fixed64(v) => Ok(v),
            _ => Err(Unusual),
        }
    }

    /// A fixed32 field.
    #[inline]
    pub fn fixed32(self) -> Result<u32, Unusual> {
        match self {
            Wire::Fixed32(v) => Ok(v),
            _ => Err(Unusual),
        }
    }
}

/// A proto3 string field: valid UTF-8 (upb refuses the message otherwise).
#[inline]
pub fn utf8(bytes: &[u8]) -> Result<&str, Unusual> {
    std::str::from_utf8(bytes).map_err(|_| Unusual)
}

/// The fields of one message, in wire order.
pub struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    pub fn new(message: &'a [u8]) -> Self {
        Fields { rest: message }
    }

    /// The next field, `None` at the end of the message.
    #[inline]
    pub fn next_field(&mut self) -> Result<Option<(u32, Wire<'a>)>, Unusual> {
        if self.rest.is_empty() {
            return Ok(None);
        }
        let before = self.rest.len();
        let tag = self.varint()?;
        // upb reads a tag as at most five bytes holding a 32-bit value.
        if before - self.rest.len() > 5 || tag > u64::from(u32::MAX) {
            return Err(Unusual);
        }
        let number = (tag >> 3) as u32;
        if number == 0 {
            return Err(Unusual);
        }
        let wire = match tag & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => Wire::Fixed64(u64::from_le_bytes(
                self.take(8)?.try_into().map_err(|_| Unusual)?,
            )),
            2 => {
                let len = self.varint()?;
                if len > i32::MAX as u64 {
                    return Err(Unusual);
                }
                Wire::Len(self.take(len as usize)?)
            }
            5 => Wire::Fixed32(u32::from_le_bytes(
                self.take(4)?.try_into().map_err(|_| Unusual)?,
            )),
            _ => return Err(Unusual), // groups (3, 4) and the invalid wire types 6 and 7
        };
        Ok(Some((number, wire)))
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8], Unusual> {
        if n > self.rest.len() {
            return Err(Unusual);
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    /// A base-128 varint of at most ten bytes, the tenth holding only the 64th bit.
    #[inline(always)]
    fn varint(&mut self) -> Result<u64, Unusual> {
        // one byte: most tags, lengths and small numbers
        if let Some((&byte, tail)) = self.rest.split_first() {
            if byte < 0x80 {
                self.rest = tail;
                return Ok(u64::from(byte));
            }
        }
        self.long_varint()
    }

    #[inline(never)]
    fn long_varint(&mut self) -> Result<u64, Unusual> {
        let mut value = 0u64;
        for i in 0..10 {
            let (&byte, tail) = self.rest.split_first().ok_or(Unusual)?;
            self.rest = tail;
            if i == 9 && byte > 1 {
                return Err(Unusual);
            }
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                return Ok(value);
            }
        }
        Err(Unusual)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(bytes: &[u8]) -> Result<Vec<(u32, Wire<'_>)>, Unusual> {
        let mut f = Fields::new(bytes);
        let mut out = vec![];
        while let Some(field) = f.next_field()? {
            out.push(field);
        }
        Ok(out)
    }

    #[test]
    fn reads_every_wire_type_in_order() {
        let msg = [
            0x08, 0x96, 0x01, // 1: varint 150
            0x11, 1, 0, 0, 0, 0, 0, 0, 0, // 2: fixed64 1
            0x1a, 2, b'h', b'i', // 3: "hi"
            0x25, 7, 0, 0, 0, // 4: fixed32 7
        ];
        assert_eq!(
            all(&msg),
            Ok(vec![
                (1, Wire::Varint(150)),
                (2, Wire::Fixed64(1)),
                (3, Wire::Len(b"hi")),
                (4, Wire::Fixed32(7)),
            ])
        );
    }

    #[test]
    fn ten_byte_varints_hold_negative_numbers_and_no_more() {
        let mut minus_one = vec![0x08];
        minus_one.extend([0xff; 9]);
        minus_one.push(0x01);
        assert_eq!(all(&minus_one), Ok(vec![(1, Wire::Varint(u64::MAX))]));
        let mut too_long = vec![0x08];
        too_long.extend([0xff; 9]);
        too_long.push(0x02);
        assert_eq!(all(&too_long), Err(Unusual));
        let mut eleven = vec![0x08];
        eleven.extend([0x80; 10]);
        eleven.push(0x00);
        assert_eq!(all(&eleven), Err(Unusual));
    }

    #[test]
    fn malformed_input_is_unusual_never_a_panic() {
        for bad in [
            &[0x08][..],                                  // varint missing
            &[0x0a, 5, b'a'][..],                         // length past the end
            &[0x00, 0x01][..],                            // field number 0
            &[0x0b][..],                                  // start group
            &[0x0c][..],                                  // end group
            &[0x0e, 0][..],                               // wire type 6
            &[0x11, 1, 2][..],                            // fixed64 cut short
            &[0x80, 0x80, 0x80, 0x80, 0x80, 0x08, 0][..], // six-byte tag
        ] {
            assert_eq!(all(bad), Err(Unusual), "{bad:?}");
        }
        assert_eq!(all(&[]), Ok(vec![]));
    }

    #[test]
    fn a_field_of_the_wrong_wire_type_is_unusual() {
        assert_eq!(Wire::Varint(1).len(), Err(Unusual));
        assert_eq!(Wire::Len(b"").varint(), Err(Unusual));
        assert_eq!(Wire::Fixed32(1).fixed64(), Err(Unusual));
        assert_eq!(Wire::Fixed64(1).fixed32(), Err(Unusual));
        assert_eq!(utf8(b"\xed\xa0\x80"), Err(Unusual)); // a surrogate
    }
}
