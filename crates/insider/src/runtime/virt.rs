//! Virtual files (Table 2): registration in the caller's mapping file, `vopen` (permission
//! checks, append-only, extents to the drive), `vread`/`vwrite`/`vsync`/`vclose`.

use super::*;

impl Runtime {
    pub(super) fn login(&self, uid: u32) -> Result<String, InsiderError> {
        Ok(self.user(uid)?.login.clone())
    }

    /// The caller's mapping file, read through the file system as the caller.
    pub(super) fn read_mappings(&mut self, uid: u32) -> Result<Vec<Mapping>, InsiderError> {
        let path = mapping_path(&self.login(uid)?);
        let fh = self.fs_open(uid, &path, OpenFlags::READ, 0)?;
        let mut bytes = Vec::new();
        loop {
            let op = FsOp::Read {
                fh,
                offset_bytes: bytes.len() as u64,
                len_bytes: u64::MAX,
            };
            match self.fs_op(uid, op, &path, "read")? {
                FsReply::Data(d) if d.is_empty() => break,
                FsReply::Data(d) => bytes.extend_from_slice(&d),
                r => unreachable!("read answered {r:?}"),
            }
        }
        self.fs_close(fh)?;
        let text = String::from_utf8(bytes).map_err(|_| InsiderError::MappingFile {
            path: path.clone(),
            reason: "not UTF-8".into(),
        })?;
        text.lines().map(|l| parse_mapping(&path, l)).collect()
    }

    /// `reg_virt_file(real_path, program)`: the virtual file `vpath` is the output of `program`
    /// over the whole of `real_path`.
    pub fn reg_virt_file(
        &mut self,
        uid: u32,
        vpath: &str,
        real_path: &str,
        program: &str,
    ) -> Result<(), InsiderError> {
        self.register(uid, vpath, vec![(real_path.to_string(), 0, None)], program)
    }

    /// The scatter-gather form: `program` over the concatenation of (path, offset, length).
    pub fn reg_virt_file_sg(
        &mut self,
        uid: u32,
        vpath: &str,
        pieces: &[(&str, u64, u64)],
        program: &str,
    ) -> Result<(), InsiderError> {
        let pieces = pieces
            .iter()
            .map(|&(p, o, l)| (p.to_string(), o, Some(l)))
            .collect();
        self.register(uid, vpath, pieces, program)
    }

    pub(super) fn register(
        &mut self,
        uid: u32,
        vpath: &str,
        pieces: Vec<(String, u64, Option<u64>)>,
        program: &str,
    ) -> Result<(), InsiderError> {
        if !self.programs.contains_key(program) {
            return Err(InsiderError::UnknownProgram {
                name: program.into(),
            });
        }
        if vpath.contains(['|', '\n', ','])
            || pieces.iter().any(|p| p.0.contains(['|', '\n', ',', ':']))
        {
            return Err(InsiderError::NotFound { path: vpath.into() });
        }
        if self.read_mappings(uid)?.iter().any(|m| m.vpath == vpath) {
            return Err(InsiderError::VirtualExists {
                vpath: vpath.into(),
            });
        }
        let slot = self
            .slots
            .iter()
            .position(Option::is_none)
            .ok_or(InsiderError::NoFreeSlot {
                slots: self.cfg.app_slots,
            })?;
        let line = format_mapping(&Mapping {
            vpath: vpath.into(),
            program: program.into(),
            pieces,
        });
        let path = mapping_path(&self.login(uid)?);
        let flags = OpenFlags {
            append: true,
            ..OpenFlags::WRITE
        };
        let fh = self.fs_open(uid, &path, flags, 0)?;
        let op = FsOp::Write {
            fh,
            offset_bytes: 0,
            data: line.into_bytes(),
        };
        let r = self.fs_op(uid, op, &path, "write");
        self.fs_close(fh)?;
        r?;
        self.slots[slot] = Some((uid, vpath.to_string()));
        Ok(())
    }

    /// Closes the real files vopen opened (and clears the flags it set).
    pub(super) fn release(&mut self, files: Vec<RealFile>) -> Result<(), InsiderError> {
        let mut first_err = None;
        for f in files {
            if f.set_append_only {
                let op = FsOp::SetAppendOnly {
                    path: f.path.clone(),
                    on: false,
                };
                if let Err(e) = self
                    .fs_op(ROOT_UID, op, &f.path, "owner")
                    .and_then(|_| self.refresh(&f.path))
                {
                    first_err.get_or_insert(e);
                }
            }
            if let Err(e) = self.fs_close(f.fh) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// `vopen(vpath, O_RDONLY | O_WRONLY)`.
    pub fn vopen(&mut self, uid: u32, vpath: &str, dir: Direction) -> Result<u32, InsiderError> {
        let mapping = self
            .read_mappings(uid)?
            .into_iter()
            .find(|m| m.vpath == vpath)
            .ok_or_else(|| InsiderError::UnknownVirtualPath {
                vpath: vpath.into(),
                login: self.user(uid).map(|u| u.login.clone()).unwrap_or_default(),
            })?;
        let flags = match dir {
            Direction::Read => OpenFlags::READ,
            Direction::Write => OpenFlags {
                append: true,
                ..OpenFlags::WRITE
            },
        };
        // Every permission first: the file system checks each open as the caller, and a
        // denied file means nothing starts.
        let mut files = Vec::new();
        for (path, _, _) in &mapping.pieces {
            match self.fs_open(uid, path, flags, 0) {
                Ok(fh) => files.push(RealFile {
                    path: path.clone(),
                    fh,
                    set_append_only: false,
                }),
                Err(e) => {
                    self.release(files)?;
                    return Err(e);
                }
            }
        }
        match self.vopen_files(uid, vpath, dir, &mapping, &mut files) {
            Ok(fd) => Ok(fd),
            Err(e) => {
                self.release(files)?;
                Err(e)
            }
        }
    }

    /// vopen once every real file is open: sizes and flags, extents, the stream.
    pub(super) fn vopen_files(
        &mut self,
        uid: u32,
        vpath: &str,
        dir: Direction,
        mapping: &Mapping,
        files: &mut [RealFile],
    ) -> Result<u32, InsiderError> {
        let mut stats = Vec::new();
        for f in files.iter() {
            stats.push(self.refresh(&f.path)?);
        }
        // The extents (filefrag) and, for a write, the file system's dirty data flushed so
        // the drive's output lands after it.
        let mut extents: Vec<Extent> = Vec::new();
        for (((_, off, len), f), st) in mapping.pieces.iter().zip(files.iter()).zip(&stats) {
            let all = self.fs_extents(f.fh, &f.path)?;
            let limit = match dir {
                Direction::Read => st.size_bytes,
                Direction::Write => all.iter().map(|e| e.len_bytes).sum(),
            };
            let len = len.unwrap_or(limit.saturating_sub(*off));
            if off + len > limit {
                return Err(InsiderError::OutOfFile {
                    path: f.path.clone(),
                    range: format!("{off}+{len}"),
                    size_bytes: limit,
                });
            }
            extents.extend(map_extents(&all, &f.path, *off, len)?);
            self.fs_sync(st.ino, f.fh, &f.path)?;
        }
        for (f, st) in files.iter_mut().zip(&stats) {
            if !st.append_only {
                let op = FsOp::SetAppendOnly {
                    path: f.path.clone(),
                    on: true,
                };
                self.fs_op(ROOT_UID, op, &f.path, "owner")?;
                f.set_append_only = true;
                if let Some(v) = self.views.get_mut(&st.ino) {
                    v.append_only = true;
                }
            }
        }
        let slot = 1 + self
            .slots
            .iter()
            .position(|s| s.as_ref().is_some_and(|(u, v)| *u == uid && v == vpath))
            .ok_or_else(|| InsiderError::SlotReleased {
                vpath: vpath.to_string(),
            })?;
        let spec = &self.programs[&mapping.program];
        let instance = (spec.make)();
        let run = ProgramRun {
            name: mapping.program.clone(),
            cost: instance.cost(),
            program: self.m.is_functional().then_some(instance),
            output_per_input: spec.output_per_input,
            throttle_mb_s: self.throttles.get(&mapping.program).copied(),
        };
        let fd = self.next_fd;
        self.next_fd += 1;
        let mut s = Stream::new(fd, slot, dir, run, self.cfg.credits_initial);
        s.pipelined = self.pipelined;
        s.total_in_bytes = match dir {
            Direction::Read => extents.iter().map(|e| e.len_bytes).sum(),
            Direction::Write => 0,
        };
        s.extents = extents;
        // The runtime's message with extents and slot.
        self.sleep(SimDuration::from_us_f64(self.cfg.pcie_latency_us))?;
        self.m.open(s);
        self.fds.insert(
            fd,
            Fd::Virtual(VirtualFd {
                dir,
                files: files
                    .iter_mut()
                    .map(|f| RealFile {
                        path: f.path.clone(),
                        fh: f.fh,
                        set_append_only: f.set_append_only,
                    })
                    .collect(),
                real_inos: stats.iter().map(|s| s.ino).collect(),
                program: mapping.program.clone(),
            }),
        );
        Ok(fd)
    }

    pub(super) fn virt(&self, fd: u32) -> Result<&VirtualFd, InsiderError> {
        match self.fds.get(&fd) {
            Some(Fd::Virtual(v)) => Ok(v),
            Some(Fd::Real(_)) => Err(InsiderError::WrongMode {
                fd,
                mode: "a real file",
                op: "a virtual-file call",
            }),
            None => Err(InsiderError::BadDescriptor { fd }),
        }
    }

    pub(super) fn fault(&self, fd: u32) -> Result<(), InsiderError> {
        let v = self.virt(fd)?;
        match self.m.stream(fd).and_then(|s| s.fault.clone()) {
            Some(reason) => Err(InsiderError::ProgramFault {
                fd,
                program: v.program.clone(),
                reason,
            }),
            None => Ok(()),
        }
    }

    /// `send_params(fd, bytes)`: one message into the program's parameter FIFO. The program
    /// starts on the host's first `vread`/`vwrite`, after every message sent before it.
    pub fn send_params(&mut self, fd: u32, params: &[u8]) -> Result<(), InsiderError> {
        self.virt(fd)?;
        self.fault(fd)?;
        self.sleep(SimDuration::from_us_f64(self.cfg.pcie_latency_us))?;
        let s = self.m.stream_mut(fd).expect("open");
        if let Some(p) = s.run.program.as_mut() {
            if let Err(e) = p.on_params(params) {
                s.fault = Some(e.to_string());
            }
        }
        self.fault(fd)
    }

    /// `vread(fd, len)`: up to `len` bytes of the program's output; 0 at the end. Blocks
    /// until `len` bytes are buffered or the output has ended (`Call::Vread`).
    pub fn vread(&mut self, fd: u32, len: u64) -> Result<(u64, Vec<u8>), InsiderError> {
        match self.call(Call::Vread { fd, len })? {
            Output::Read { n, data } => Ok((n, data)),
            o => unreachable!("vread answered {o:?}"),
        }
    }

    /// `vwrite(fd, data)` (timing fidelity: `len` bytes of no particular content;
    /// `Call::Vwrite`).
    pub fn vwrite(&mut self, fd: u32, len: u64, data: &[u8]) -> Result<(), InsiderError> {
        let data = data.to_vec();
        self.call(Call::Vwrite { fd, len, data }).map(|_| ())
    }

    /// `vsync(fd)`: waits until the drive has processed every byte written so far and
    /// written every whole request of output (`Call::Vsync`).
    pub fn vsync(&mut self, fd: u32) -> Result<(), InsiderError> {
        self.call(Call::Vsync { fd }).map(|_| ())
    }

    /// `vclose(fd)`: ends the stream; for a virtual write, returns the bytes the drive wrote to
    /// the real file(s) (the caller may truncate to it). Clears the append-only flags vopen
    /// set, closes the real files, drops the host's read cache of them after a write, resets
    /// the slot.
    pub fn vclose(&mut self, fd: u32) -> Result<u64, InsiderError> {
        let v = self.virt(fd)?;
        let dir = v.dir;
        let mut result = Ok(0);
        if dir == Direction::Write {
            self.m.push_write(fd, 0, Vec::new(), true);
            self.m.arm(fd);
            let drain = self.submit_drain(fd);
            result = self.run_to_completion(drain).map(|o| match o {
                Output::Drained { written_bytes } => written_bytes,
                o => unreachable!("a drain answered {o:?}"),
            });
        } else if let Err(e) = self.fault(fd) {
            result = Err(e);
        }
        self.m.close(fd);
        self.sleep(SimDuration::from_us_f64(self.cfg.pcie_latency_us))?;
        let Some(Fd::Virtual(v)) = self.fds.remove(&fd) else {
            unreachable!("checked virtual");
        };
        if dir == Direction::Write {
            for &ino in &v.real_inos {
                self.drop_pages(ino, 0, u64::MAX);
            }
        }
        self.release(v.files)?;
        result
    }
}

fn format_mapping(m: &Mapping) -> String {
    let pieces: Vec<String> = m
        .pieces
        .iter()
        .map(|(p, o, l)| match l {
            Some(l) => format!("{p}:{o}:{l}"),
            None => format!("{p}:{o}:*"),
        })
        .collect();
    format!("{}|{}|{}\n", m.vpath, m.program, pieces.join(","))
}

fn parse_mapping(path: &str, line: &str) -> Result<Mapping, InsiderError> {
    let bad = |reason: &str| InsiderError::MappingFile {
        path: path.into(),
        reason: format!("{reason} in {line:?}"),
    };
    let mut f = line.split('|');
    let (Some(vpath), Some(program), Some(pieces), None) = (f.next(), f.next(), f.next(), f.next())
    else {
        return Err(bad("expected vpath|program|pieces"));
    };
    let pieces = pieces
        .split(',')
        .map(|p| {
            let mut g = p.split(':');
            let (Some(path), Some(o), Some(l), None) = (g.next(), g.next(), g.next(), g.next())
            else {
                return Err(bad("expected path:offset:length"));
            };
            let o = o.parse().map_err(|_| bad("bad offset"))?;
            let l = match l {
                "*" => None,
                l => Some(l.parse().map_err(|_| bad("bad length"))?),
            };
            Ok((path.to_string(), o, l))
        })
        .collect::<Result<_, _>>()?;
    Ok(Mapping {
        vpath: vpath.into(),
        program: program.into(),
        pieces,
    })
}
