//! The `ARROW:schema` key-value metadata pyarrow puts in a Parquet file: the
//! table's Arrow schema as an Arrow IPC message (a flatbuffer, `Schema.fbs` and
//! `Message.fbs` of the Arrow format), base64-encoded. Readers that know it
//! (pyarrow, and so pandas) take the Arrow types from it; it is written here for
//! the three kinds of column ecnsim's tables have: `int64`, `double` and `utf8`,
//! every field nullable, no field or schema metadata.
//!
//! The flatbuffer is laid out front to back: a table's vtable right before it,
//! and everything a table refers to after it (flatbuffer offsets are unsigned,
//! so they point forward).

/// Arrow type of one column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ArrowType {
    /// `Int { bitWidth: 64, is_signed: true }`.
    Int64,
    /// `FloatingPoint { precision: DOUBLE }`.
    Float64,
    /// `Utf8`.
    Utf8,
}

/// `Type` union tags of `Schema.fbs`.
const TYPE_INT: u8 = 2;
const TYPE_FLOATING_POINT: u8 = 3;
const TYPE_UTF8: u8 = 5;
/// `MessageHeader` union tag of a `Schema`.
const HEADER_SCHEMA: u8 = 1;
/// `MetadataVersion.V5`.
const METADATA_V5: i16 = 4;
/// `Precision.DOUBLE`.
const PRECISION_DOUBLE: i16 = 2;

/// A field of a flatbuffer table being written.
enum Slot {
    /// Absent (default).
    None,
    /// A little-endian scalar of 1, 2, 4 or 8 bytes.
    Scalar(Vec<u8>),
    /// An offset to an object written later; its position is returned for patching.
    Offset,
}

/// A flatbuffer written front to back.
struct Builder {
    buf: Vec<u8>,
}

impl Builder {
    fn align(&mut self, to: usize) {
        while self.buf.len() % to != 0 {
            self.buf.push(0);
        }
    }

    /// Write a table with `slots` (by field id), its vtable just before it; returns the
    /// positions of its `Offset` slots, in order.
    fn table(&mut self, slots: &[Slot]) -> Vec<usize> {
        // The table's layout: 4-byte vtable offset, then the fields, largest first so each
        // is aligned (the table starts 8-aligned).
        let mut order: Vec<usize> = (0..slots.len()).collect();
        let size = |s: &Slot| match s {
            Slot::None => 0,
            Slot::Scalar(b) => b.len(),
            Slot::Offset => 4,
        };
        order.sort_by_key(|&i| std::cmp::Reverse(size(&slots[i])));
        let mut field_at = vec![0_u16; slots.len()];
        let mut at: usize = 4;
        for &i in &order {
            let n = size(&slots[i]);
            if n == 0 {
                continue;
            }
            at = at.next_multiple_of(n);
            field_at[i] = u16::try_from(at).expect("small tables");
            at += n;
        }
        let table_len = u16::try_from(at).expect("small tables");
        let vtable_len = 4 + 2 * slots.len();
        // The vtable, placed so that the table after it starts 8-aligned.
        self.align(2);
        while (self.buf.len() + vtable_len) % 8 != 0 {
            self.buf.extend_from_slice(&[0, 0]);
        }
        let vtable = self.buf.len();
        self.buf.extend_from_slice(&u16::try_from(vtable_len).expect("small vtables").to_le_bytes());
        self.buf.extend_from_slice(&table_len.to_le_bytes());
        for &f in &field_at {
            self.buf.extend_from_slice(&f.to_le_bytes());
        }
        let table = self.buf.len();
        debug_assert_eq!(table % 8, 0);
        self.buf.resize(table + usize::from(table_len), 0);
        let back = i32::try_from(table - vtable).expect("small buffers");
        self.buf[table..table + 4].copy_from_slice(&back.to_le_bytes());
        let mut offsets = Vec::new();
        for (i, slot) in slots.iter().enumerate() {
            let p = table + usize::from(field_at[i]);
            match slot {
                Slot::None => {}
                Slot::Scalar(b) => self.buf[p..p + b.len()].copy_from_slice(b),
                Slot::Offset => offsets.push(p),
            }
        }
        offsets
    }

    /// Point the offset at `from` to the next object written (after aligning to `align`).
    fn patch_here(&mut self, from: usize, align: usize) {
        self.align(align);
        let to = u32::try_from(self.buf.len() - from).expect("small buffers");
        self.buf[from..from + 4].copy_from_slice(&to.to_le_bytes());
    }

    fn string(&mut self, s: &str) {
        self.buf.extend_from_slice(&u32::try_from(s.len()).expect("short names").to_le_bytes());
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
    }

    /// A vector of `n` offsets; returns the positions of its elements.
    fn offset_vector(&mut self, n: usize) -> Vec<usize> {
        self.buf.extend_from_slice(&u32::try_from(n).expect("few fields").to_le_bytes());
        let first = self.buf.len();
        self.buf.resize(first + 4 * n, 0);
        (0..n).map(|i| first + 4 * i).collect()
    }
}

/// One field: `Field { name, nullable: true, type, children: [] }`.
fn field(b: &mut Builder, name: &str, ty: ArrowType) {
    let tag = match ty {
        ArrowType::Int64 => TYPE_INT,
        ArrowType::Float64 => TYPE_FLOATING_POINT,
        ArrowType::Utf8 => TYPE_UTF8,
    };
    // name 0, nullable 1, type_type 2, type 3, dictionary 4, children 5.
    let offsets = b.table(&[
        Slot::Offset,
        Slot::Scalar(vec![1]),
        Slot::Scalar(vec![tag]),
        Slot::Offset,
        Slot::None,
        Slot::Offset,
    ]);
    b.patch_here(offsets[0], 4);
    b.string(name);
    b.align(4);
    let type_slots = match ty {
        // bitWidth 0, is_signed 1.
        ArrowType::Int64 => vec![Slot::Scalar(64_i32.to_le_bytes().to_vec()), Slot::Scalar(vec![1])],
        // precision 0.
        ArrowType::Float64 => vec![Slot::Scalar(PRECISION_DOUBLE.to_le_bytes().to_vec())],
        ArrowType::Utf8 => vec![],
    };
    // The offset points at the table, after its vtable.
    let before = b.buf.len();
    let _ = b.table(&type_slots);
    let table = table_start_after(&b.buf, before, type_slots.len());
    let to = u32::try_from(table - offsets[1]).expect("small buffers");
    b.buf[offsets[1]..offsets[1] + 4].copy_from_slice(&to.to_le_bytes());
    b.patch_here(offsets[2], 4);
    let _ = b.offset_vector(0);
}

/// The start of the table whose vtable (of `slots` fields) was written from `from` on.
fn table_start_after(buf: &[u8], from: usize, slots: usize) -> usize {
    let vtable_len = 4 + 2 * slots;
    let mut vtable = from.next_multiple_of(2);
    while (vtable + vtable_len) % 8 != 0 {
        vtable += 2;
    }
    debug_assert!(vtable + vtable_len <= buf.len());
    vtable + vtable_len
}

/// The `ARROW:schema` value for `columns`: base64 of the IPC-encapsulated `Schema` message.
pub(crate) fn arrow_schema_metadata(columns: &[(&str, ArrowType)]) -> String {
    let mut b = Builder { buf: vec![0; 4] };
    b.align(8);
    // The root offset (at 0) points at the Message table, after its vtable.
    let before = b.buf.len();
    // version 0, header_type 1, header 2, bodyLength 3.
    let message = b.table(&[
        Slot::Scalar(METADATA_V5.to_le_bytes().to_vec()),
        Slot::Scalar(vec![HEADER_SCHEMA]),
        Slot::Offset,
        Slot::Scalar(0_i64.to_le_bytes().to_vec()),
    ]);
    let root = u32::try_from(table_start_after(&b.buf, before, 4)).expect("small buffers");
    b.buf[0..4].copy_from_slice(&root.to_le_bytes());
    // The Schema: endianness 0 (Little, the default), fields 1.
    let before = b.buf.len();
    let schema = b.table(&[Slot::None, Slot::Offset]);
    let schema_at = table_start_after(&b.buf, before, 2);
    let to = u32::try_from(schema_at - message[0]).expect("small buffers");
    b.buf[message[0]..message[0] + 4].copy_from_slice(&to.to_le_bytes());
    b.patch_here(schema[0], 4);
    let elements = b.offset_vector(columns.len());
    for (&(name, ty), element) in columns.iter().zip(elements) {
        let before = b.buf.len();
        field(&mut b, name, ty);
        let at = table_start_after(&b.buf, before, 6);
        let to = u32::try_from(at - element).expect("small buffers");
        b.buf[element..element + 4].copy_from_slice(&to.to_le_bytes());
    }
    b.align(8);
    // Encapsulated: continuation marker, metadata length, the flatbuffer (8-byte padded).
    let mut message_bytes = Vec::with_capacity(8 + b.buf.len());
    message_bytes.extend_from_slice(&0xFFFF_FFFF_u32.to_le_bytes());
    message_bytes.extend_from_slice(&i32::try_from(b.buf.len()).expect("small schemas").to_le_bytes());
    message_bytes.extend_from_slice(&b.buf);
    base64(&message_bytes)
}

/// Standard base64 (RFC 4648 §4) with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0_u32, |n, (i, &x)| n | (u32::from(x) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
