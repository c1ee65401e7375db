//! Physical layout of the FTL (FlashAbacus §4.3): a *page group* is one page on every
//! channel × plane at the same (way, block, page) — 4 channels × 2 planes × 8 KiB = 64 KiB on
//! the `flashabacus` preset — so one group is written by one multi-plane program per channel,
//! all channels in parallel. A *superblock* is the set of blocks that hold a column of page
//! groups: (way, block row) across every channel and plane; GC erases superblocks.
//!
//! Superblock `s` lives on way `s % ways` in block row `s / ways`, so consecutive superblocks
//! fall on different dies. Each (superblock, channel, plane) member names its physical block
//! through a remap table, initially the block row itself; a member that turns bad is remapped
//! to a spare block of the same plane (the spares are the top `spare_blocks_per_plane` rows).
//! Two checkpoint slots take the last superblocks below the spares; the rest hold data. A
//! slot holds a whole number of superblocks per way (consecutive superblocks, so every way
//! is covered) and its rows rotate over them: slot row `r` is page `r / n` of the slot's
//! superblock `r % n` (`n` superblocks per slot). Consecutive checkpoint rows therefore land
//! on different dies and can be programmed in parallel, while each block is still programmed
//! in page order as rows are appended.

use crate::config::FtlConfig;
use nearflash_blockdev::SECTOR_BYTES;
use nearflash_flash::{BlockId, DieId, Geometry, PageId};

/// A physical page group: superblock × page row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pgn(pub u32);

/// A logical page group (host offset / group size).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lgn(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SbId(pub u32);

#[derive(Clone, Debug)]
pub struct Layout {
    pub geo: Geometry,
    /// Block rows usable by superblocks (the rest are spares).
    rows: u32,
    superblocks: u32,
    ckpt_sbs_per_slot: u32,
    logical_groups: u64,
    /// Write points per lane: one per way of a reclaim group (every way without FDP).
    write_points: u32,
    /// Lanes of host and of GC write points: one each, or with FDP one per placement
    /// handle and reclaim group (and for GC per group, or per handle and group when the
    /// handles are persistently isolated; `FdpConfig::host_lanes`, `gc_lanes`).
    host_lanes: u32,
    gc_lanes: u32,
    /// Mapping units per page group: 1 under page-group mapping, channels × planes × units
    /// per page under page-level mapping (`ftl.mapping = "page"`).
    units_per_group: u32,
    page_mapped: bool,
    /// Translation units of a cached mapping table (0: the whole table is in DRAM). They are
    /// mapped like host units, at logical entries after the host's.
    translation_units: u64,
}

/// A logical 4 KiB unit (page-level mapping): host offset / 4096.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lun(pub u32);

/// A physical unit (page-level mapping): page group × units per group + slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pun(pub u32);

/// Where a slot of a page group lies (page-level mapping).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotPos {
    pub channel: u32,
    pub plane: u32,
    /// The unit's index within its page.
    pub unit_in_page: u32,
    /// The page's index within the group (`Layout::page_index`).
    pub page: u32,
}

impl Layout {
    pub fn new(geo: &Geometry, cfg: &FtlConfig) -> Self {
        let rows = geo.blocks_per_plane - cfg.spare_blocks_per_plane;
        let superblocks = rows * geo.ways_per_channel;
        let n = u64::from(geo.pages_per_block);
        let page_mapped = cfg.mapping == crate::config::MappingMode::Page;
        let units_per_page = if page_mapped {
            (u64::from(geo.page_size_bytes) / SECTOR_BYTES * SECTOR_BYTES
                / crate::config::PAGE_MAP_UNIT_BYTES)
                .max(1) as u32
        } else {
            1
        };
        let units_per_group = if page_mapped {
            geo.channels * geo.planes_per_die * units_per_page
        } else {
            1
        };
        let mut l = Layout {
            geo: geo.clone(),
            rows,
            superblocks,
            ckpt_sbs_per_slot: 1,
            logical_groups: 0,
            write_points: geo.ways_per_channel / cfg.fdp.groups(),
            host_lanes: cfg.fdp.host_lanes(),
            gc_lanes: cfg.fdp.gc_lanes(),
            units_per_group,
            page_mapped,
            translation_units: 0,
        };
        // A checkpoint holds one 12-byte entry per logical group plus per-superblock records;
        // size the slots for the worst case (all data superblocks logical) and round up.
        let group_bytes = u64::from(l.group_pages()) * u64::from(geo.page_size_bytes);
        // A slot spans every way (a multiple of `ways` superblocks) so its rows can be striped.
        let ways = geo.ways_per_channel;
        let mut slot = ways;
        loop {
            let data =
                u64::from(superblocks.saturating_sub(2 * slot)) * n * u64::from(units_per_group);
            let bytes = crate::checkpoint::encoded_bytes_max(
                data,
                superblocks,
                l.group_pages(),
                crate::fdp::checkpoint_bytes(&cfg.fdp, data),
            );
            let need = (bytes.div_ceil(group_bytes).div_ceil(n) as u32).next_multiple_of(ways);
            if need <= slot || 2 * slot >= superblocks {
                break;
            }
            slot = need;
        }
        l.ckpt_sbs_per_slot = slot;
        let data_groups = u64::from(l.data_superblocks()) * n;
        // Over-provisioning holds back its share of the data superblocks; in addition the
        // write points, the GC reserve and their destinations stay outside the logical
        // capacity, so a full device can always collect. (Story: the two used to be combined
        // with `min`, so on small devices the reserve alone decided the capacity and
        // `over_provisioning_percent` changed nothing.)
        let op_groups =
            ((data_groups as f64) * (cfg.over_provisioning_percent / 100.0)).ceil() as u64;
        let floor_sbs = u64::from(l.reserved_superblocks(cfg));
        l.logical_groups =
            data_groups.saturating_sub(op_groups + floor_sbs * n + l.padding_groups());
        // A cached mapping table keeps the table on flash: its translation units take their
        // room out of the logical capacity.
        let host_units = l.logical_groups * u64::from(units_per_group);
        let table_bytes = host_units * crate::config::MAP_ENTRY_BYTES;
        if page_mapped && cfg.mapping_cache_bytes.is_some_and(|b| b < table_bytes) {
            let t = host_units.div_ceil(crate::config::ENTRIES_PER_TRANSLATION_UNIT);
            l.logical_groups = l
                .logical_groups
                .saturating_sub(t.div_ceil(u64::from(units_per_group)));
            l.translation_units = (l.logical_groups * u64::from(units_per_group))
                .div_ceil(crate::config::ENTRIES_PER_TRANSLATION_UNIT);
        }
        l
    }

    /// Groups that GC's program unit holds back (page-level mapping). GC copies a victim's
    /// valid units into whole fills — a die's multi-plane slice of `units_per_slice` units, or
    /// with one-shot programs (`flash.one_shot_pages` = k) a word line of k slices — and seals
    /// the run's last fill padded so that the victim can be erased. A victim therefore frees
    /// something only when at least a fill's worth of it is invalid: every superblock may hold
    /// up to `k × units_per_slice − 1` invalid units that GC cannot reclaim. That much per data
    /// superblock stays outside the logical capacity, so a full device always has a victim
    /// (stories: the configuration fuzzer's 1-die device of two word lines per block ran out of
    /// space with 4 of 6 units valid everywhere; with one-page programs, a 4-plane device
    /// without over-provisioning ran out with 13 of 16 units valid everywhere, since only the
    /// one-shot part had been held back). 0 under page-group mapping.
    fn padding_groups(&self) -> u64 {
        if !self.page_mapped {
            return 0;
        }
        let fill = u64::from(self.geo.one_shot_pages) * u64::from(self.units_per_slice());
        let stuck = u64::from(self.data_superblocks()) * (fill - 1);
        stuck.div_ceil(u64::from(self.units_per_group))
    }

    /// Translation units of a cached mapping table (0 when the table is in DRAM).
    pub fn translation_units(&self) -> u64 {
        self.translation_units
    }

    /// Logical entries the host addresses (the translation units' follow them).
    pub fn host_entries(&self) -> u64 {
        self.logical_groups * u64::from(self.units_per_group)
    }

    /// The logical unit translation unit `t` is mapped at.
    pub fn translation_lun(&self, t: u32) -> Lun {
        debug_assert!(u64::from(t) < self.translation_units);
        Lun((self.host_entries() + u64::from(t)) as u32)
    }

    /// The translation unit holding host unit `u`'s entry.
    pub fn translation_of(&self, u: Lun) -> u32 {
        debug_assert!(u64::from(u.0) < self.host_entries());
        (u64::from(u.0) / crate::config::ENTRIES_PER_TRANSLATION_UNIT) as u32
    }

    pub fn group_pages(&self) -> u32 {
        self.geo.channels * self.geo.planes_per_die
    }

    /// Whether the FTL maps 4 KiB units (`ftl.mapping = "page"`) rather than page groups.
    pub fn page_mapped(&self) -> bool {
        self.page_mapped
    }

    /// Mapping entries per page group: 1, or the group's 4 KiB units under page mapping.
    pub fn units_per_group(&self) -> u32 {
        self.units_per_group
    }

    /// Units one page holds (page-level mapping; 1 otherwise).
    pub fn units_per_page(&self) -> u32 {
        self.units_per_group / self.group_pages()
    }

    /// Units one die's multi-plane program holds: the program unit of page-level mapping.
    pub fn units_per_slice(&self) -> u32 {
        debug_assert!(
            self.page_mapped,
            "slices are page-level mapping's program unit"
        );
        self.units_per_group / self.geo.channels
    }

    /// Host sectors of a mapping unit: a page group, or 4 KiB.
    pub fn unit_sectors(&self) -> u32 {
        if self.page_mapped {
            (crate::config::PAGE_MAP_UNIT_BYTES / SECTOR_BYTES) as u32
        } else {
            (self.group_bytes() / SECTOR_BYTES) as u32
        }
    }

    /// Bytes of a mapping unit.
    pub fn unit_bytes(&self) -> u64 {
        u64::from(self.unit_sectors()) * SECTOR_BYTES
    }

    /// Logical mapping entries: page groups, or 4 KiB units (the host's, then a cached
    /// mapping table's translation units).
    pub fn logical_entries(&self) -> u64 {
        self.host_entries() + self.translation_units
    }

    /// Physical mapping entries: every page group's units, checkpoint slots included.
    pub fn physical_entries(&self) -> u32 {
        self.total_pgns() * self.units_per_group
    }

    /// Mapping entries a superblock holds in native mode.
    pub fn entries_per_superblock(&self) -> u32 {
        self.groups_per_superblock() * self.units_per_group
    }

    /// The physical unit in slot `slot` of group `pgn`.
    pub fn pun(&self, pgn: Pgn, slot: u32) -> Pun {
        debug_assert!(slot < self.units_per_group);
        Pun(pgn.0 * self.units_per_group + slot)
    }

    /// The group and slot of physical unit `p`.
    pub fn split_pun(&self, p: Pun) -> (Pgn, u32) {
        (Pgn(p.0 / self.units_per_group), p.0 % self.units_per_group)
    }

    /// Slot `s` of a group: slices (one die's multi-plane program) follow the channels, and
    /// within a slice the units fill plane 0's page, then plane 1's, and so on.
    pub fn slot_pos(&self, slot: u32) -> SlotPos {
        let ups = self.units_per_slice();
        let upp = self.units_per_page();
        let channel = slot / ups;
        let plane = (slot % ups) / upp;
        SlotPos {
            channel,
            plane,
            unit_in_page: slot % upp,
            page: self.page_index(channel, plane),
        }
    }

    /// Where slot `slot`'s bytes sit in a group buffer (pages at `page_size_bytes` strides).
    pub fn slot_buf_offset(&self, slot: u32) -> usize {
        let p = self.slot_pos(slot);
        p.page as usize * self.geo.page_size_bytes as usize
            + (u64::from(p.unit_in_page) * crate::config::PAGE_MAP_UNIT_BYTES) as usize
    }

    /// Bytes of a page that hold host sectors: the whole 512-byte sectors that fit. A page
    /// size that is not a multiple of the sector leaves its tail unused (zeros, covered by the
    /// spare-area checksum like the rest of the page).
    pub fn page_data_bytes(&self) -> u64 {
        u64::from(self.geo.page_size_bytes) / SECTOR_BYTES * SECTOR_BYTES
    }

    /// Host sectors a page holds.
    pub fn sectors_per_page(&self) -> u32 {
        (u64::from(self.geo.page_size_bytes) / SECTOR_BYTES) as u32
    }

    /// Logical bytes of a page group: the host's unit of mapping.
    pub fn group_bytes(&self) -> u64 {
        u64::from(self.group_pages()) * self.page_data_bytes()
    }

    /// Physical bytes of a page group (every page whole): the firmware's group buffer.
    pub fn group_buf_bytes(&self) -> u64 {
        u64::from(self.group_pages()) * u64::from(self.geo.page_size_bytes)
    }

    /// Where host sector `s` of a group sits in the group buffer.
    pub fn sector_buf_offset(&self, s: u32) -> usize {
        let spp = self.sectors_per_page();
        (s / spp) as usize * self.geo.page_size_bytes as usize
            + (s % spp) as usize * SECTOR_BYTES as usize
    }

    pub fn groups_per_superblock(&self) -> u32 {
        self.geo.pages_per_block
    }

    pub fn superblocks(&self) -> u32 {
        self.superblocks
    }

    /// Superblocks that hold data (the checkpoint slots excluded).
    pub fn data_superblocks(&self) -> u32 {
        self.superblocks - 2 * self.ckpt_sbs_per_slot
    }

    /// The superblocks of checkpoint slot `slot` (0 or 1).
    pub fn ckpt_slot(&self, slot: u32) -> impl Iterator<Item = SbId> {
        let first = self.data_superblocks() + slot * self.ckpt_sbs_per_slot;
        (first..first + self.ckpt_sbs_per_slot).map(SbId)
    }

    pub fn ckpt_sbs_per_slot(&self) -> u32 {
        self.ckpt_sbs_per_slot
    }

    /// Page groups a checkpoint slot holds.
    pub fn ckpt_slot_rows(&self) -> u32 {
        self.ckpt_sbs_per_slot * self.geo.pages_per_block
    }

    /// Where row `row` of checkpoint slot `slot` lives: rows rotate over the slot's
    /// superblocks (hence over the ways), each superblock filled in page order.
    pub fn ckpt_row(&self, slot: u32, row: u32) -> (SbId, u32) {
        let n = self.ckpt_sbs_per_slot;
        let first = self.data_superblocks() + slot * n;
        (SbId(first + row % n), row / n)
    }

    pub fn is_data_sb(&self, sb: SbId) -> bool {
        sb.0 < self.data_superblocks()
    }

    pub fn logical_groups(&self) -> u64 {
        self.logical_groups
    }

    pub fn logical_bytes(&self) -> u64 {
        self.logical_groups * self.group_bytes()
    }

    /// Write points of one lane (host or GC stream): one per way of its reclaim group.
    pub fn write_points(&self) -> u32 {
        self.write_points
    }

    pub fn host_lanes(&self) -> u32 {
        self.host_lanes
    }

    pub fn gc_lanes(&self) -> u32 {
        self.gc_lanes
    }

    /// Superblocks outside the logical capacity besides over-provisioning: the write points
    /// and, for each reclaim group (each keeps its own free superblocks, `device/gc.rs`), the
    /// foreground-GC reserve and the crash reserve. One group (no FDP):
    /// `gc_foreground_free_superblocks + open_points + 1`.
    pub fn reserved_superblocks(&self, cfg: &FtlConfig) -> u32 {
        cfg.fdp.groups() * (cfg.gc_foreground_free_superblocks + 1) + self.open_points()
    }

    /// Write points that may hold an open superblock at once, every host and GC lane's:
    /// superblocks that stay outside the logical capacity. Twice the ways without FDP.
    pub fn open_points(&self) -> u32 {
        (self.host_lanes + self.gc_lanes) * self.write_points
    }

    /// Page groups a superblock holds in SLC mode: `1 / bits_per_cell` of its page rows (the
    /// first ones; the rest stay erased until the superblock is erased).
    pub fn slc_groups_per_superblock(&self, bits_per_cell: u32) -> u32 {
        self.groups_per_superblock() / bits_per_cell.max(1)
    }

    /// SLC-mode superblocks that hold `bytes` of host data (rounded up).
    pub fn slc_superblocks_for(&self, bytes: u64, bits_per_cell: u32) -> u32 {
        let per_sb = u64::from(self.slc_groups_per_superblock(bits_per_cell)) * self.group_bytes();
        u32::try_from(bytes.div_ceil(per_sb.max(1))).unwrap_or(u32::MAX)
    }

    /// Data superblocks beyond the logical capacity, the write points, the GC reserve and
    /// what GC's padded fills hold back: what `over_provisioning_percent` held back (whole
    /// superblocks).
    pub fn over_provisioned_superblocks(&self, cfg: &FtlConfig) -> u32 {
        let n = u64::from(self.groups_per_superblock());
        let floor = u64::from(self.reserved_superblocks(cfg));
        let logical_sbs = self.logical_groups.div_ceil(n);
        let padding_sbs = self.padding_groups().div_ceil(n);
        u64::from(self.data_superblocks())
            .saturating_sub(floor + logical_sbs + padding_sbs)
            .try_into()
            .unwrap_or(0)
    }

    pub fn way_of(&self, sb: SbId) -> u32 {
        sb.0 % self.geo.ways_per_channel
    }

    /// The block row a superblock occupies before any remapping.
    pub fn row_of(&self, sb: SbId) -> u32 {
        sb.0 / self.geo.ways_per_channel
    }

    pub fn spare_rows(&self) -> std::ops::Range<u32> {
        self.rows..self.geo.blocks_per_plane
    }

    /// The superblock holding physical mapping entry `p` (a group, or a unit).
    pub fn sb_of_entry(&self, p: u32) -> SbId {
        self.sb_of(Pgn(p / self.units_per_group))
    }

    pub fn sb_of(&self, pgn: Pgn) -> SbId {
        SbId(pgn.0 / self.geo.pages_per_block)
    }

    pub fn page_of(&self, pgn: Pgn) -> u32 {
        pgn.0 % self.geo.pages_per_block
    }

    pub fn pgn(&self, sb: SbId, page: u32) -> Pgn {
        Pgn(sb.0 * self.geo.pages_per_block + page)
    }

    pub fn total_pgns(&self) -> u32 {
        self.superblocks * self.geo.pages_per_block
    }

    /// Page `k` of a group sits on channel `k % channels`, plane `k / channels`: consecutive
    /// pages of a group go to different channels, so small requests spread over the buses.
    pub fn page_position(&self, k: u32) -> (u32, u32) {
        (k % self.geo.channels, k / self.geo.channels)
    }

    pub fn page_index(&self, channel: u32, plane: u32) -> u32 {
        plane * self.geo.channels + channel
    }

    pub fn die_of(&self, sb: SbId, channel: u32) -> DieId {
        self.geo.die(channel, self.way_of(sb))
    }
}

/// Which physical block backs each (superblock, channel, plane); changes when a block turns
/// bad and a spare takes its place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemapTable {
    members: Vec<u32>,
    per_sb: u32,
    channels: u32,
}

impl RemapTable {
    pub fn identity(layout: &Layout) -> Self {
        let per_sb = layout.group_pages();
        let mut members = Vec::with_capacity((layout.superblocks() * per_sb) as usize);
        for s in 0..layout.superblocks() {
            members.extend(std::iter::repeat_n(layout.row_of(SbId(s)), per_sb as usize));
        }
        RemapTable {
            members,
            per_sb,
            channels: layout.geo.channels,
        }
    }

    pub fn from_raw(members: Vec<u32>, layout: &Layout) -> Option<Self> {
        (members.len() == (layout.superblocks() * layout.group_pages()) as usize).then_some(
            RemapTable {
                members,
                per_sb: layout.group_pages(),
                channels: layout.geo.channels,
            },
        )
    }

    pub fn raw(&self) -> &[u32] {
        &self.members
    }

    /// Block within plane backing (sb, channel, plane).
    pub fn block(&self, sb: SbId, channel: u32, plane: u32) -> u32 {
        self.members[(sb.0 * self.per_sb + plane * self.channels + channel) as usize]
    }

    pub fn set(&mut self, sb: SbId, channel: u32, plane: u32, block: u32) {
        self.members[(sb.0 * self.per_sb + plane * self.channels + channel) as usize] = block;
    }

    pub fn block_id(&self, layout: &Layout, sb: SbId, channel: u32, plane: u32) -> BlockId {
        layout.geo.block_id(
            layout.die_of(sb, channel),
            plane,
            self.block(sb, channel, plane),
        )
    }

    pub fn page_id(&self, layout: &Layout, pgn: Pgn, k: u32) -> PageId {
        let (c, l) = layout.page_position(k);
        let sb = layout.sb_of(pgn);
        layout
            .geo
            .page_id(self.block_id(layout, sb, c, l), layout.page_of(pgn))
    }
}
