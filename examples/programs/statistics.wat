;; statistics: standard input is rows of little-endian u32 values, argv[1] the row size in
;; bytes (decimal, a positive multiple of 4); for each row, writes (max, min, sum low 32 bits,
;; sum high 32 bits) as little-endian u32s. The same output as nearflash's built-in INSIDER
;; statistics drive program (crates/iscapps/src/apps/statistics.rs), the same algorithm (one
;; pass, min/max by compare and select, a 64-bit sum). Exit 2 on a bad row size, 1 when the
;; input ends inside a row.
;;
;; Memory: 0 iovec, 16 nread/nwritten, 256 argc/argv sizes, 512 argv, 1024..4096 argument
;; bytes, 8192..12288 output tuples, 65536..131072 input buffer (a partial value carried over
;; to its start).
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 2)
  (data (i32.const 2048) "statistics: usage: statistics ROW_BYTES (a positive multiple of 4)\n")
  (data (i32.const 2200) "statistics: input ends inside a row\n")
  (global $out (mut i32) (i32.const 8192))

  (func $say (param $at i32) (param $len i32)
    (i32.store (i32.const 32) (local.get $at))
    (i32.store (i32.const 36) (local.get $len))
    (drop (call $fd_write (i32.const 2) (i32.const 32) (i32.const 1) (i32.const 40))))

  (func $usage
    (call $say (i32.const 2048) (i32.const 67))
    (call $proc_exit (i32.const 2)))

  (func $flush
    (i32.store (i32.const 0) (i32.const 8192))
    (i32.store (i32.const 4) (i32.sub (global.get $out) (i32.const 8192)))
    (if (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16))
      (then (call $proc_exit (i32.const 1))))
    (global.set $out (i32.const 8192)))

  ;; argv[1] as a decimal row size in values.
  (func $row_values (result i32)
    (local $p i32) (local $b i32) (local $v i64)
    (if (call $args_sizes_get (i32.const 256) (i32.const 260)) (then (call $usage)))
    (if (i32.ne (i32.load (i32.const 256)) (i32.const 2)) (then (call $usage)))
    (if (i32.gt_u (i32.load (i32.const 260)) (i32.const 3072)) (then (call $usage)))
    (if (call $args_get (i32.const 512) (i32.const 1024)) (then (call $usage)))
    (local.set $p (i32.load (i32.const 516)))
    (if (i32.eqz (i32.load8_u (local.get $p))) (then (call $usage)))
    (block $end
      (loop $digit
        (local.set $b (i32.load8_u (local.get $p)))
        (br_if $end (i32.eqz (local.get $b)))
        (if (i32.gt_u (i32.sub (local.get $b) (i32.const 48)) (i32.const 9)) (then (call $usage)))
        (local.set $v (i64.add (i64.mul (local.get $v) (i64.const 10))
                               (i64.extend_i32_u (i32.sub (local.get $b) (i32.const 48)))))
        (if (i64.gt_u (local.get $v) (i64.const 0xffffffff)) (then (call $usage)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $digit)))
    (if (i64.eqz (local.get $v)) (then (call $usage)))
    (if (i64.ne (i64.and (local.get $v) (i64.const 3)) (i64.const 0)) (then (call $usage)))
    (i32.wrap_i64 (i64.shr_u (local.get $v) (i64.const 2))))

  (func (export "_start")
    (local $row i32) (local $left i32) (local $filled i32) (local $p i32) (local $end i32)
    (local $stop i32) (local $v i32) (local $min i32) (local $max i32) (local $sum i64)
    (local $carry i32)
    (local.set $row (call $row_values))
    (local.set $left (local.get $row))
    (local.set $min (i32.const -1))
    (block $eof
      (loop $read
        (i32.store (i32.const 0) (i32.add (i32.const 65536) (local.get $filled)))
        (i32.store (i32.const 4) (i32.sub (i32.const 65536) (local.get $filled)))
        (if (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 16))
          (then (call $proc_exit (i32.const 1))))
        (br_if $eof (i32.eqz (i32.load (i32.const 16))))
        (local.set $filled (i32.add (local.get $filled) (i32.load (i32.const 16))))
        (local.set $p (i32.const 65536))
        (local.set $end (i32.add (i32.const 65536) (i32.and (local.get $filled) (i32.const -4))))
        (block $words_done
          (loop $span
            (br_if $words_done (i32.ge_u (local.get $p) (local.get $end)))
            ;; the values of this row in the buffer
            (local.set $stop (i32.add (local.get $p) (i32.shl (local.get $left) (i32.const 2))))
            (if (i32.gt_u (local.get $stop) (local.get $end)) (then (local.set $stop (local.get $end))))
            (local.set $left (i32.sub (local.get $left)
                                      (i32.shr_u (i32.sub (local.get $stop) (local.get $p)) (i32.const 2))))
            (loop $value
              (local.set $v (i32.load (local.get $p)))
              (local.set $min (select (local.get $v) (local.get $min) (i32.lt_u (local.get $v) (local.get $min))))
              (local.set $max (select (local.get $v) (local.get $max) (i32.gt_u (local.get $v) (local.get $max))))
              (local.set $sum (i64.add (local.get $sum) (i64.extend_i32_u (local.get $v))))
              (local.set $p (i32.add (local.get $p) (i32.const 4)))
              (br_if $value (i32.lt_u (local.get $p) (local.get $stop))))
            (if (i32.eqz (local.get $left))
              (then
                (i32.store (global.get $out) (local.get $max))
                (i32.store offset=4 (global.get $out) (local.get $min))
                (i64.store offset=8 (global.get $out) (local.get $sum))
                (global.set $out (i32.add (global.get $out) (i32.const 16)))
                (if (i32.ge_u (global.get $out) (i32.const 12288)) (then (call $flush)))
                (local.set $left (local.get $row))
                (local.set $min (i32.const -1))
                (local.set $max (i32.const 0))
                (local.set $sum (i64.const 0))))
            (br $span)))
        ;; a partial value moves to the buffer's start
        (local.set $carry (i32.and (local.get $filled) (i32.const 3)))
        (memory.copy (i32.const 65536) (local.get $end) (local.get $carry))
        (local.set $filled (local.get $carry))
        (br $read)))
    (if (i32.or (local.get $filled) (i32.ne (local.get $left) (local.get $row)))
      (then (call $say (i32.const 2200) (i32.const 36)) (call $proc_exit (i32.const 1))))
    (call $flush)))
