;; grep: for each line of standard input, the first column where the pattern (argv[1])
;; occurs, written as a (row, col) pair of little-endian u32s; lines without a match write
;; nothing. The same output as nearflash's built-in INSIDER grep drive program
;; (crates/iscapps/src/apps/grep/program.rs), the same algorithm (KMP per line up to its first
;; match, then a word-at-a-time search for the newline).
;; Exit 2 on a bad pattern (none, empty, longer than 64 bytes or containing a newline).
;;
;; Memory: 0 iovec, 16 nread, 256 argc/argv sizes, 512 argv, 1024..4096 argument bytes,
;; 4096 pattern, 4160 KMP failure table (i32 x 64), 8192 output pair, 65536 input buffer.
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 2)
  (data (i32.const 2048) "grep: usage: grep PATTERN (1-64 bytes, no newline)\n")

  (func $fail (param $code i32)
    ;; the usage message on fd 2, then exit
    (i32.store (i32.const 32) (i32.const 2048))
    (i32.store (i32.const 36) (i32.const 52))
    (drop (call $fd_write (i32.const 2) (i32.const 32) (i32.const 1) (i32.const 40)))
    (call $proc_exit (local.get $code)))

  ;; Reads argv[1] into the pattern area; returns its length.
  (func $pattern (result i32)
    (local $src i32) (local $len i32) (local $b i32)
    (if (call $args_sizes_get (i32.const 256) (i32.const 260)) (then (call $fail (i32.const 2))))
    (if (i32.ne (i32.load (i32.const 256)) (i32.const 2)) (then (call $fail (i32.const 2))))
    (if (i32.gt_u (i32.load (i32.const 260)) (i32.const 3072)) (then (call $fail (i32.const 2))))
    (if (call $args_get (i32.const 512) (i32.const 1024)) (then (call $fail (i32.const 2))))
    (local.set $src (i32.load (i32.const 516)))
    (block $end
      (loop $copy
        (local.set $b (i32.load8_u (i32.add (local.get $src) (local.get $len))))
        (br_if $end (i32.eqz (local.get $b)))
        (if (i32.or (i32.eq (local.get $b) (i32.const 10)) (i32.ge_u (local.get $len) (i32.const 64)))
          (then (call $fail (i32.const 2))))
        (i32.store8 (i32.add (i32.const 4096) (local.get $len)) (local.get $b))
        (local.set $len (i32.add (local.get $len) (i32.const 1)))
        (br $copy)))
    (if (i32.eqz (local.get $len)) (then (call $fail (i32.const 2))))
    (local.get $len))

  ;; KMP failure function: fail[i] = longest proper border of pattern[..=i].
  (func $failure (param $plen i32)
    (local $i i32) (local $k i32)
    (i32.store (i32.const 4160) (i32.const 0))
    (local.set $i (i32.const 1))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $plen)))
        (block $stop
          (loop $back
            (br_if $stop (i32.eqz (local.get $k)))
            (br_if $stop (i32.eq (i32.load8_u (i32.add (i32.const 4096) (local.get $i)))
                                 (i32.load8_u (i32.add (i32.const 4096) (local.get $k)))))
            (local.set $k (i32.load (i32.add (i32.const 4156) (i32.shl (local.get $k) (i32.const 2)))))
            (br $back)))
        (if (i32.eq (i32.load8_u (i32.add (i32.const 4096) (local.get $i)))
                    (i32.load8_u (i32.add (i32.const 4096) (local.get $k))))
          (then (local.set $k (i32.add (local.get $k) (i32.const 1)))))
        (i32.store (i32.add (i32.const 4160) (i32.shl (local.get $i) (i32.const 2))) (local.get $k))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))

  (func (export "_start")
    (local $plen i32) (local $n i32) (local $p i32) (local $end i32) (local $b i32)
    (local $row i32) (local $col i32) (local $m i32) (local $done i32)
    (local $last8 i32) (local $w i64)
    (local.set $plen (call $pattern))
    (call $failure (local.get $plen))
    (block $eof
      (loop $read
        (i32.store (i32.const 0) (i32.const 65536))
        (i32.store (i32.const 4) (i32.const 65536))
        (if (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 16))
          (then (call $proc_exit (i32.const 1))))
        (local.set $n (i32.load (i32.const 16)))
        (br_if $eof (i32.eqz (local.get $n)))
        (local.set $p (i32.const 65536))
        (local.set $end (i32.add (i32.const 65536) (local.get $n)))
        (local.set $last8 (i32.sub (local.get $end) (i32.const 8)))
        (block $chunk
          (loop $byte
            (if (local.get $done)
              (then
                ;; the line matched: find its newline a 64-bit word at a time
                (block $found
                  (loop $word
                    (br_if $found (i32.gt_u (local.get $p) (local.get $last8)))
                    (local.set $w (i64.xor (i64.load (local.get $p)) (i64.const 0x0a0a0a0a0a0a0a0a)))
                    (br_if $found (i64.ne (i64.and (i64.and (i64.sub (local.get $w) (i64.const 0x0101010101010101))
                                                            (i64.xor (local.get $w) (i64.const -1)))
                                                   (i64.const 0x8080808080808080))
                                          (i64.const 0)))
                    (local.set $p (i32.add (local.get $p) (i32.const 8)))
                    (br $word)))))
            (br_if $chunk (i32.ge_u (local.get $p) (local.get $end)))
            (local.set $b (i32.load8_u (local.get $p)))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (if (i32.eq (local.get $b) (i32.const 10))
              (then
                (local.set $row (i32.add (local.get $row) (i32.const 1)))
                (local.set $col (i32.const 0))
                (local.set $m (i32.const 0))
                (local.set $done (i32.const 0)))
              (else (if (i32.eqz (local.get $done))
                (then
                  (block $stop
                    (loop $back
                      (br_if $stop (i32.eqz (local.get $m)))
                      (br_if $stop (i32.eq (i32.load8_u (i32.add (i32.const 4096) (local.get $m))) (local.get $b)))
                      (local.set $m (i32.load (i32.add (i32.const 4156) (i32.shl (local.get $m) (i32.const 2)))))
                      (br $back)))
                  (if (i32.eq (i32.load8_u (i32.add (i32.const 4096) (local.get $m))) (local.get $b))
                    (then (local.set $m (i32.add (local.get $m) (i32.const 1)))))
                  (local.set $col (i32.add (local.get $col) (i32.const 1)))
                  (if (i32.eq (local.get $m) (local.get $plen))
                    (then
                      (i32.store (i32.const 8192) (local.get $row))
                      (i32.store (i32.const 8196) (i32.sub (local.get $col) (local.get $plen)))
                      (i32.store (i32.const 32) (i32.const 8192))
                      (i32.store (i32.const 36) (i32.const 8))
                      (if (call $fd_write (i32.const 1) (i32.const 32) (i32.const 1) (i32.const 40))
                        (then (call $proc_exit (i32.const 1))))
                      (local.set $done (i32.const 1))))))))
            (br $byte)))
        (br $read)))))
