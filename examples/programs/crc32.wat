;; crc32: the CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib's crc32() and
;; Rust's crc32fast) of standard input, written as 8 lowercase hex digits and a
;; newline. No paper's device program computes it; a checksum next to the data is what an
;; integrity scrub on a drive would run. Table-driven, one byte per step.
;;
;; Memory: 0 iovec, 16 nread, 1024..2048 the 256-entry table, 4096 output text,
;; 65536..131072 input buffer.
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 2)
  (data (i32.const 3072) "0123456789abcdef")

  (func $table
    (local $n i32) (local $c i32) (local $k i32)
    (loop $entry
      (local.set $c (local.get $n))
      (local.set $k (i32.const 8))
      (loop $bit
        (local.set $c (i32.xor (i32.shr_u (local.get $c) (i32.const 1))
                               (i32.and (i32.const 0xedb88320)
                                        (i32.sub (i32.const 0) (i32.and (local.get $c) (i32.const 1))))))
        (local.set $k (i32.sub (local.get $k) (i32.const 1)))
        (br_if $bit (local.get $k)))
      (i32.store (i32.add (i32.const 1024) (i32.shl (local.get $n) (i32.const 2))) (local.get $c))
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (br_if $entry (i32.lt_u (local.get $n) (i32.const 256)))))

  (func (export "_start")
    (local $crc i32) (local $p i32) (local $end i32) (local $i i32)
    (call $table)
    (local.set $crc (i32.const -1))
    (block $eof
      (loop $read
        (i32.store (i32.const 0) (i32.const 65536))
        (i32.store (i32.const 4) (i32.const 65536))
        (if (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 16))
          (then (call $proc_exit (i32.const 1))))
        (br_if $eof (i32.eqz (i32.load (i32.const 16))))
        (local.set $p (i32.const 65536))
        (local.set $end (i32.add (i32.const 65536) (i32.load (i32.const 16))))
        (loop $byte
          (local.set $crc
            (i32.xor (i32.shr_u (local.get $crc) (i32.const 8))
                     (i32.load offset=1024
                       (i32.shl (i32.and (i32.xor (local.get $crc) (i32.load8_u (local.get $p)))
                                         (i32.const 255))
                                (i32.const 2)))))
          (local.set $p (i32.add (local.get $p) (i32.const 1)))
          (br_if $byte (i32.lt_u (local.get $p) (local.get $end))))
        (br $read)))
    (local.set $crc (i32.xor (local.get $crc) (i32.const -1)))
    ;; 8 hex digits, most significant first
    (loop $digit
      (i32.store8 (i32.add (i32.const 4096) (local.get $i))
        (i32.load8_u (i32.add (i32.const 3072)
          (i32.and (i32.shr_u (local.get $crc) (i32.sub (i32.const 28) (i32.shl (local.get $i) (i32.const 2))))
                   (i32.const 15)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $digit (i32.lt_u (local.get $i) (i32.const 8))))
    (i32.store8 (i32.const 4104) (i32.const 10))
    (i32.store (i32.const 0) (i32.const 4096))
    (i32.store (i32.const 4) (i32.const 9))
    (if (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16))
      (then (call $proc_exit (i32.const 1))))))
