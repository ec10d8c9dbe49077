//! Reads the ELF header facts a dist binary is checked against: class, byte order, machine and static linking.

use std::path::Path;

use anyhow::{bail, Context as _};
use object::elf::{FileHeader64, DT_NEEDED, EM_PPC64, EM_X86_64, PT_INTERP};
use object::read::elf::{Dyn as _, FileHeader as _, ProgramHeader as _};
use object::Endianness;

/// What the checks need to know about one executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElfFacts {
    pub little_endian: bool,
    pub machine: u16,
    /// Has a `PT_INTERP` (needs a dynamic loader at run time).
    pub interpreter: bool,
    /// Number of `DT_NEEDED` shared libraries.
    pub needed: usize,
}

impl ElfFacts {
    /// Runs `FROM scratch`: no loader and no shared library (a static-pie still has a dynamic section).
    pub(crate) fn is_static(&self) -> bool {
        !self.interpreter && self.needed == 0
    }

    pub fn machine_name(&self) -> String {
        match self.machine {
            EM_X86_64 => "x86_64".to_owned(),
            EM_PPC64 => "PPC64".to_owned(),
            other => format!("e_machine {other}"),
        }
    }
}

/// Parses the header and program headers of a 64-bit ELF file (32-bit files are refused).
pub fn facts(data: &[u8]) -> anyhow::Result<ElfFacts> {
    let header = FileHeader64::<Endianness>::parse(data)
        .map_err(|e| anyhow::anyhow!("not a 64-bit ELF file: {e}"))?;
    let endian = header.endian().map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut interpreter = false;
    let mut needed = 0;
    let segments = header
        .program_headers(endian, data)
        .map_err(|e| anyhow::anyhow!("bad program headers: {e}"))?;
    for segment in segments {
        interpreter |= segment.p_type(endian) == PT_INTERP;
        if let Some(entries) = segment
            .dynamic(endian, data)
            .map_err(|e| anyhow::anyhow!("bad dynamic segment: {e}"))?
        {
            needed += entries
                .iter()
                .filter(|d| d.tag32(endian) == Some(DT_NEEDED))
                .count();
        }
    }
    Ok(ElfFacts {
        little_endian: header.is_little_endian(),
        machine: header.e_machine(endian),
        interpreter,
        needed,
    })
}

/// Fails unless the file at `path` is a little-endian 64-bit executable for `machine`, static when asked.
pub fn check(path: &Path, machine: u16, want_static: bool) -> anyhow::Result<ElfFacts> {
    let data = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let f = facts(&data).with_context(|| path.display().to_string())?;
    let expected = ElfFacts {
        machine,
        little_endian: true,
        interpreter: false,
        needed: 0,
    }
    .machine_name();
    if f.machine != machine {
        bail!(
            "{}: built for {}, expected {expected}",
            path.display(),
            f.machine_name()
        );
    }
    if !f.little_endian {
        bail!("{}: big-endian, expected little-endian", path.display());
    }
    if want_static && !f.is_static() {
        bail!(
            "{}: dynamically linked (interpreter: {}, {} shared libraries needed); a static build was asked for",
            path.display(),
            f.interpreter,
            f.needed
        );
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 file header with no program or section headers.
    fn header(little: bool, machine: u16) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2; // ELFCLASS64
        h[5] = if little { 1 } else { 2 };
        h[6] = 1; // EV_CURRENT
        let put16 = |h: &mut Vec<u8>, at: usize, v: u16| {
            let b = if little {
                v.to_le_bytes()
            } else {
                v.to_be_bytes()
            };
            h[at..at + 2].copy_from_slice(&b);
        };
        put16(&mut h, 16, 2); // ET_EXEC
        put16(&mut h, 18, machine);
        put16(&mut h, 52, 64); // e_ehsize
        put16(&mut h, 54, 56); // e_phentsize
        put16(&mut h, 58, 64); // e_shentsize
        h[20] = if little { 1 } else { 0 };
        h[23] = if little { 0 } else { 1 };
        h
    }

    #[test]
    fn reads_machine_and_byte_order() {
        let f = facts(&header(true, EM_PPC64)).unwrap();
        assert_eq!(f.machine_name(), "PPC64");
        assert!(f.little_endian);
        assert!(f.is_static());
        let be = facts(&header(false, EM_PPC64)).unwrap();
        assert!(!be.little_endian);
    }

    #[test]
    fn check_refuses_wrong_machine_and_big_endian() {
        let dir = std::env::temp_dir().join(format!("wsbench-elf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let x86 = dir.join("x86");
        std::fs::write(&x86, header(true, EM_X86_64)).unwrap();
        assert!(check(&x86, EM_X86_64, true).is_ok());
        let err = check(&x86, EM_PPC64, true).unwrap_err().to_string();
        assert!(err.contains("built for x86_64, expected PPC64"), "{err}");
        let be = dir.join("be");
        std::fs::write(&be, header(false, EM_PPC64)).unwrap();
        assert!(check(&be, EM_PPC64, false)
            .unwrap_err()
            .to_string()
            .contains("big-endian"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_dynamically_linked_executable_is_not_static() {
        // This test binary itself is an ordinary (dynamically linked) build for the host.
        let exe = std::env::current_exe().unwrap();
        let f = facts(&std::fs::read(&exe).unwrap()).unwrap();
        assert!(f.interpreter && f.needed > 0, "{f:?}");
        assert!(!f.is_static());
        let err = check(&exe, f.machine, true).unwrap_err().to_string();
        assert!(err.contains("dynamically linked"), "{err}");
    }

    #[test]
    fn refuses_non_elf_input() {
        assert!(facts(b"#!/bin/sh\n").is_err());
    }
}
