//! The image file itself: its header (magic and preset) and `ImageStore`, the `PageStore`
//! whose programmed pages live in slots after the header and the bitmap.
//!
//! An image opened read-only (to list, check or export it) keeps every page program and
//! block erase in memory (`Overlay`): recovery, journal replay and their checkpoints run as
//! usual, and the file is never written (nor opened for writing).

use crate::error::ImageError;
use nearflash_flash::{BlockId, Geometry, PageId, PageState, PageStore, StoreError};
use nearflash_preset::Preset;
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;

const MAGIC: &[u8; 8] = b"NFIMAGE1";
/// The header region: magic, preset length, preset TOML, zero padding.
pub(crate) const HEADER_BYTES: u64 = 1 << 20;
/// Magic and preset length: the fixed part of the header.
const PREAMBLE_BYTES: u64 = 16;

/// The preset as the header holds it, checked to fit the header region.
fn header_text(preset: &Preset) -> Result<String, ImageError> {
    let text = toml::to_string(preset).map_err(ImageError::PresetToToml)?;
    if PREAMBLE_BYTES + text.len() as u64 > HEADER_BYTES {
        return Err(ImageError::PresetTooLarge);
    }
    Ok(text)
}

/// Checks that `preset` fits an image header (before anything is written).
pub(crate) fn check_header_fits(preset: &Preset) -> Result<(), ImageError> {
    header_text(preset).map(drop)
}

/// Writes the header of a new image: the magic, then `preset` as TOML with its length.
pub(crate) fn write_header(file: &File, image: &str, preset: &Preset) -> Result<(), ImageError> {
    let text = header_text(preset)?;
    let mut header = Vec::with_capacity(PREAMBLE_BYTES as usize + text.len());
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&(text.len() as u64).to_le_bytes());
    header.extend_from_slice(text.as_bytes());
    file.write_all_at(&header, 0)
        .map_err(ImageError::io(format!("image {image}")))
}

/// Reads an image's header and parses the preset it holds.
pub(crate) fn read_header(file: &File, image: &str) -> Result<Preset, ImageError> {
    let len_bytes = file
        .metadata()
        .map_err(ImageError::io(format!("image {image}")))?
        .len();
    let mut head = [0u8; PREAMBLE_BYTES as usize];
    let magic_len = len_bytes.min(8) as usize;
    file.read_exact_at(&mut head[..magic_len], 0)
        .map_err(ImageError::io(format!("image {image}")))?;
    if len_bytes >= 8 && &head[0..8] != MAGIC {
        return Err(ImageError::BadMagic {
            image: image.to_string(),
        });
    }
    if len_bytes < HEADER_BYTES {
        // An empty file (or a header cut short) is no image; say so rather than "failed to
        // fill whole buffer" from a read past its end.
        return Err(ImageError::TooShort {
            image: image.to_string(),
            len_bytes,
            header_bytes: HEADER_BYTES,
        });
    }
    file.read_exact_at(&mut head, 0)
        .map_err(ImageError::io(format!("image {image}")))?;
    let len_bytes = u64::from_le_bytes(head[8..16].try_into().expect("8 bytes"));
    if len_bytes > HEADER_BYTES - PREAMBLE_BYTES {
        return Err(ImageError::CorruptHeader {
            image: image.to_string(),
            preset_len_bytes: len_bytes,
        });
    }
    let mut text = vec![0u8; len_bytes as usize];
    file.read_exact_at(&mut text, PREAMBLE_BYTES)
        .map_err(ImageError::io(format!("image {image}")))?;
    let text = String::from_utf8(text).map_err(|_| ImageError::PresetNotUtf8 {
        image: image.to_string(),
    })?;
    Ok(Preset::parse(&format!("image {image}"), &text, &[])?)
}

/// One bit per flash page of `preset`.
pub(crate) fn bitmap_bytes(preset: &Preset) -> u64 {
    Geometry::from_config(&preset.flash)
        .page_count()
        .div_ceil(8)
}

/// The whole image of `preset`: header, bitmap and one slot per page.
fn image_bytes(preset: &Preset) -> u64 {
    let pages = Geometry::from_config(&preset.flash).page_count();
    let slot_bytes =
        u64::from(preset.flash.page_size_bytes) + u64::from(preset.flash.oob_size_bytes);
    HEADER_BYTES + bitmap_bytes(preset) + pages * slot_bytes
}

/// The image's page store: programmed pages live in slots after the header and the bitmap.
pub(crate) struct ImageStore {
    file: File,
    path: String,
    programmed: Vec<u8>,
    page_bytes: u64,
    oob_bytes: u64,
    error: Option<StoreError>,
    /// Read-only: the pages programmed since opening (data, spare) — the file is not written.
    overlay: Option<Overlay>,
}

/// Pages programmed in memory by an image opened read-only: page index → (data, spare).
type Overlay = HashMap<u64, (Vec<u8>, Vec<u8>)>;

impl ImageStore {
    /// The store of a new image of `preset` over `file`, whose header is written: grows the
    /// file (sparsely) to hold every page's slot.
    pub(crate) fn create(
        file: File,
        image: &str,
        preset: &Preset,
    ) -> Result<ImageStore, ImageError> {
        let len_bytes = image_bytes(preset);
        if file.metadata().map_err(ImageError::io(image))?.len() < len_bytes {
            file.set_len(len_bytes)
                .map_err(ImageError::io(format!("image {image}")))?;
        }
        Self::with_bitmap(file, image, preset)
    }

    /// The store of an existing image of `preset`: refuses a file shorter than the image's
    /// layout (an image is never shorter than that: `create` sizes it whole).
    pub(crate) fn open(
        file: File,
        image: &str,
        preset: &Preset,
        read_only: bool,
    ) -> Result<ImageStore, ImageError> {
        let expected_bytes = image_bytes(preset);
        let len_bytes = file.metadata().map_err(ImageError::io(image))?.len();
        if len_bytes < expected_bytes {
            return Err(ImageError::Truncated {
                image: image.to_string(),
                len_bytes,
                expected_bytes,
            });
        }
        let mut store = Self::with_bitmap(file, image, preset)?;
        if read_only {
            store.overlay = Some(HashMap::new());
        }
        Ok(store)
    }

    /// Reads the programmed-page bitmap.
    fn with_bitmap(file: File, image: &str, preset: &Preset) -> Result<ImageStore, ImageError> {
        let bitmap_bytes = bitmap_bytes(preset);
        let mut programmed = vec![0u8; bitmap_bytes as usize];
        file.read_exact_at(&mut programmed, HEADER_BYTES)
            .map_err(ImageError::io(format!("image {image}")))?;
        Ok(ImageStore {
            file,
            path: image.to_string(),
            programmed,
            page_bytes: u64::from(preset.flash.page_size_bytes),
            oob_bytes: u64::from(preset.flash.oob_size_bytes),
            error: None,
            overlay: None,
        })
    }

    fn bitmap_at() -> u64 {
        HEADER_BYTES
    }

    fn slot_at(&self, page: PageId) -> u64 {
        HEADER_BYTES + self.programmed.len() as u64 + page.0 * (self.page_bytes + self.oob_bytes)
    }

    fn note(&mut self, r: std::io::Result<()>) {
        if let (Err(source), None) = (r, &self.error) {
            self.error = Some(StoreError::Io {
                path: self.path.clone(),
                source,
            });
        }
    }

    fn is_programmed(&self, p: u64) -> bool {
        self.programmed[(p / 8) as usize] & (1 << (p % 8)) != 0
    }

    fn set_programmed(&mut self, p: u64, on: bool) {
        let i = (p / 8) as usize;
        if on {
            self.programmed[i] |= 1 << (p % 8);
        } else {
            self.programmed[i] &= !(1 << (p % 8));
        }
        if self.overlay.is_some() {
            return;
        }
        let r = self
            .file
            .write_all_at(&self.programmed[i..i + 1], Self::bitmap_at() + i as u64);
        self.note(r);
    }
}

impl PageStore for ImageStore {
    fn holds_data(&self) -> bool {
        true
    }
    fn program(&mut self, page: PageId, data: &[u8], oob: &[u8]) {
        if let Some(overlay) = &mut self.overlay {
            overlay.insert(page.0, (data.to_vec(), oob.to_vec()));
            self.set_programmed(page.0, true);
            return;
        }
        let at = self.slot_at(page);
        let r = self
            .file
            .write_all_at(data, at)
            .and_then(|()| self.file.write_all_at(oob, at + self.page_bytes));
        self.note(r);
        self.set_programmed(page.0, true);
    }
    fn read(&mut self, page: PageId, data: &mut [u8], oob: &mut [u8]) -> PageState {
        if !self.is_programmed(page.0) {
            data.fill(0xFF);
            oob.fill(0xFF);
            return PageState::Erased;
        }
        if let Some((d, o)) = self.overlay.as_ref().and_then(|ov| ov.get(&page.0)) {
            data.copy_from_slice(d);
            oob.copy_from_slice(o);
            return PageState::Programmed;
        }
        let at = self.slot_at(page);
        let r = self
            .file
            .read_exact_at(data, at)
            .and_then(|()| self.file.read_exact_at(oob, at + self.page_bytes));
        self.note(r);
        PageState::Programmed
    }
    fn erase(&mut self, block: BlockId, pages_per_block: u32) {
        let first = block.0 * u64::from(pages_per_block);
        for p in first..first + u64::from(pages_per_block) {
            if let Some(overlay) = &mut self.overlay {
                overlay.remove(&p);
            }
            self.set_programmed(p, false);
        }
    }
    fn health(&self) -> Result<(), &StoreError> {
        self.error.as_ref().map_or(Ok(()), Err)
    }
    /// An image file cannot back two devices.
    fn try_clone(&self) -> Option<Box<dyn PageStore>> {
        None
    }
}
