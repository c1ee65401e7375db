//! The code of an eBPF program from the ELF object `clang -target bpf -O2 -c` writes: a
//! 64-bit little-endian relocatable file for machine EM_BPF (247), whose one non-empty
//! executable section holds the program. Every offset and size is checked against the file
//! before it is read, so a truncated or forged file is an [`ElfError`] naming what is wrong,
//! never a panic. Relocations against the code are refused: a program that needs one uses
//! global data, a map or an external function, none of which a compute namespace provides
//! (examples/cs/cs_helpers.h says what a program may use).

/// ELF identification: `\x7fELF`.
const MAGIC: [u8; 4] = [0x7f, b'E', b'L', b'F'];
/// ELFCLASS64, ELFDATA2LSB (System V ABI, "ELF Identification").
const CLASS_64: u8 = 2;
const DATA_LSB: u8 = 1;
/// ET_REL: a relocatable object, what `clang -c` writes.
const TYPE_REL: u16 = 1;
/// EM_BPF (Linux `include/uapi/linux/elf-em.h`).
const MACHINE_BPF: u16 = 247;
/// Section header size of ELF64.
const SHDR_BYTES: usize = 64;
/// SHT_REL, SHT_RELA; SHF_EXECINSTR.
const SHT_REL: u32 = 9;
const SHT_RELA: u32 = 4;
const SHF_EXECINSTR: u64 = 0x4;
/// Sections an object may have before it is refused as forged (clang's objects have ~10).
const SECTIONS_MAX: usize = 1024;

/// Why an object was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ElfError {
    #[error("not an ELF file: it starts with {found} (expected 7f 45 4c 46)")]
    BadMagic { found: String },
    #[error("truncated ELF: {what} at byte {offset} needs {needed} bytes, the file has {size}")]
    Truncated {
        what: &'static str,
        offset: u64,
        needed: u64,
        size: u64,
    },
    #[error("not a 64-bit little-endian eBPF relocatable object ({field} is {value}; build it with `clang -target bpf -O2 -c`)")]
    WrongKind { field: &'static str, value: u64 },
    #[error("the object has {count} sections, over the limit of {SECTIONS_MAX}")]
    TooManySections { count: usize },
    #[error("the object has no code: no non-empty executable section")]
    NoCode,
    #[error("the object has {count} code sections ({names}); put the program in one")]
    SeveralCodeSections { count: usize, names: String },
    #[error("code section {name} is {bytes} bytes, not a whole number of 8-byte instructions")]
    Ragged { name: String, bytes: u64 },
    #[error("code section {name} needs {count} relocation(s) (global data, maps or external functions); a compute namespace provides none of them")]
    Relocations { name: String, count: u64 },
}

/// The program's code, as eBPF instructions (8 bytes each), and its section's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Code {
    pub section: String,
    pub bytes: Vec<u8>,
}

struct Section {
    name_offset: u32,
    kind: u32,
    flags: u64,
    offset: u64,
    size: u64,
    info: u32,
}

fn field<'b>(
    bytes: &'b [u8],
    offset: u64,
    len: u64,
    what: &'static str,
) -> Result<&'b [u8], ElfError> {
    let truncated = || ElfError::Truncated {
        what,
        offset,
        needed: len,
        size: bytes.len() as u64,
    };
    let end = offset.checked_add(len).ok_or_else(truncated)?;
    if end > bytes.len() as u64 {
        return Err(truncated());
    }
    Ok(&bytes[offset as usize..end as usize])
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Reads the code out of an ELF object.
pub fn code(bytes: &[u8]) -> Result<Code, ElfError> {
    let head = field(bytes, 0, 64, "the ELF header").map_err(|e| match bytes.get(..4) {
        Some(m) if m != MAGIC => bad_magic(bytes),
        _ => e,
    })?;
    if head[..4] != MAGIC {
        return Err(bad_magic(bytes));
    }
    let wrong = |field: &'static str, value: u64| ElfError::WrongKind { field, value };
    if head[4] != CLASS_64 {
        return Err(wrong("EI_CLASS", u64::from(head[4])));
    }
    if head[5] != DATA_LSB {
        return Err(wrong("EI_DATA", u64::from(head[5])));
    }
    if u16_at(head, 16) != TYPE_REL {
        return Err(wrong("e_type", u64::from(u16_at(head, 16))));
    }
    if u16_at(head, 18) != MACHINE_BPF {
        return Err(wrong("e_machine", u64::from(u16_at(head, 18))));
    }
    let shoff = u64_at(head, 40);
    let shentsize = u16_at(head, 58);
    let shnum = usize::from(u16_at(head, 60));
    let shstrndx = usize::from(u16_at(head, 62));
    if usize::from(shentsize) != SHDR_BYTES {
        return Err(wrong("e_shentsize", u64::from(shentsize)));
    }
    if shnum > SECTIONS_MAX {
        return Err(ElfError::TooManySections { count: shnum });
    }
    let table = field(
        bytes,
        shoff,
        (shnum * SHDR_BYTES) as u64,
        "the section header table",
    )?;
    let sections: Vec<Section> = table
        .chunks_exact(SHDR_BYTES)
        .map(|h| Section {
            name_offset: u32_at(h, 0),
            kind: u32_at(h, 4),
            flags: u64_at(h, 8),
            offset: u64_at(h, 24),
            size: u64_at(h, 32),
            info: u32_at(h, 44),
        })
        .collect();
    let names = match sections.get(shstrndx) {
        Some(s) => field(bytes, s.offset, s.size, "the section name table")?,
        None => return Err(wrong("e_shstrndx", shstrndx as u64)),
    };
    let name_of = |s: &Section| -> String {
        let from = (s.name_offset as usize).min(names.len());
        let tail = &names[from..];
        let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        String::from_utf8_lossy(&tail[..end]).into_owned()
    };
    let code: Vec<usize> = sections
        .iter()
        .enumerate()
        .filter(|(_, s)| s.flags & SHF_EXECINSTR != 0 && s.size > 0)
        .map(|(i, _)| i)
        .collect();
    let index = match code.as_slice() {
        [] => return Err(ElfError::NoCode),
        [one] => *one,
        many => {
            return Err(ElfError::SeveralCodeSections {
                count: many.len(),
                names: many
                    .iter()
                    .map(|&i| name_of(&sections[i]))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
        }
    };
    let text = &sections[index];
    let name = name_of(text);
    if !text.size.is_multiple_of(8) {
        return Err(ElfError::Ragged {
            name,
            bytes: text.size,
        });
    }
    let relocations: u64 = sections
        .iter()
        .filter(|s| (s.kind == SHT_REL || s.kind == SHT_RELA) && s.info as usize == index)
        .map(|s| s.size / if s.kind == SHT_REL { 16 } else { 24 })
        .sum();
    if relocations > 0 {
        return Err(ElfError::Relocations {
            name,
            count: relocations,
        });
    }
    let bytes = field(bytes, text.offset, text.size, "the code section")?.to_vec();
    assert!(bytes.len().is_multiple_of(8) && !bytes.is_empty());
    Ok(Code {
        section: name,
        bytes,
    })
}

fn bad_magic(bytes: &[u8]) -> ElfError {
    ElfError::BadMagic {
        found: bytes
            .iter()
            .take(4)
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_is_not_elf_names_its_first_bytes() {
        let e = code(b"\0asm\x01\0\0\0").unwrap_err();
        assert_eq!(
            e,
            ElfError::BadMagic {
                found: "00 61 73 6d".into()
            }
        );
    }

    #[test]
    fn a_header_cut_short_is_a_truncated_file() {
        let mut head = MAGIC.to_vec();
        head.extend([2, 1, 1]);
        assert!(matches!(code(&head), Err(ElfError::Truncated { .. })));
    }

    #[test]
    fn a_section_table_past_the_end_is_a_truncated_file() {
        let mut head = vec![0u8; 64];
        head[..4].copy_from_slice(&MAGIC);
        head[4] = CLASS_64;
        head[5] = DATA_LSB;
        head[16] = 1;
        head[18] = 247;
        head[40..48].copy_from_slice(&1_000_000u64.to_le_bytes());
        head[58] = 64;
        head[60] = 3;
        let e = code(&head).unwrap_err();
        assert!(
            matches!(
                e,
                ElfError::Truncated {
                    what: "the section header table",
                    ..
                }
            ),
            "{e}"
        );
    }
}
