//! What the ECC and read-retry did over the whole run (`[flash.media]`).

use nearflash_ftl::Device;
use serde::Serialize;

/// What the ECC and read-retry did (`flash.media`), whole run.
#[derive(Clone, Debug, Serialize)]
pub struct MediaReport {
    pub codewords_corrected: u64,
    pub bits_corrected: u64,
    /// Element `s`: reads that went on to retry step `s + 1`.
    pub read_retries_by_step: Vec<u64>,
    /// Flash page reads left uncorrectable after the last retry step.
    pub uncorrectable_page_reads: u64,
    /// Host reads (per page group touched) and partial writes failed by them.
    pub uncorrectable_requests: u64,
    pub blocks_retired: u64,
}

impl MediaReport {
    pub(super) fn of(dev: &Device) -> Option<Self> {
        let m = dev.backbone().media_stats()?;
        Some(MediaReport {
            codewords_corrected: m.codewords_corrected,
            bits_corrected: m.bits_corrected,
            read_retries_by_step: m.read_retries_by_step.clone(),
            uncorrectable_page_reads: m.uncorrectable_page_reads,
            uncorrectable_requests: dev.stats().uncorrectable_reads,
            blocks_retired: dev.stats().media_blocks_retired,
        })
    }
}

impl MediaReport {
    /// Table rows, whole run.
    pub(super) fn rows(&self) -> Vec<(String, String)> {
        let steps: Vec<String> = self
            .read_retries_by_step
            .iter()
            .map(u64::to_string)
            .collect();
        vec![
            (
                "media: codewords / bits corrected".into(),
                format!("{} / {}", self.codewords_corrected, self.bits_corrected),
            ),
            (
                "media: read retries by step".into(),
                format!("[{}]", steps.join(", ")),
            ),
            (
                "media: uncorrectable page reads (requests)".into(),
                format!(
                    "{} ({})",
                    self.uncorrectable_page_reads, self.uncorrectable_requests
                ),
            ),
            (
                "media: blocks retired for wear".into(),
                self.blocks_retired.to_string(),
            ),
        ]
    }
}
