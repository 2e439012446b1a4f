;; A hand-written hostile component whose values alias: every element of a
;; list points at the same bytes (1 MiB of "a" at 0x60000), so that a host
;; copying each element on its own would copy far more than the component's
;; memory holds. budget_test.go says what each export must do.
(component
  (import "wasi:http/types@0.2.3" (instance $http
    (export "fields" (type $fields (sub resource)))
    (type $herr (variant (case "invalid-syntax") (case "forbidden") (case "immutable")))
    (export "header-error" (type $he (eq $herr)))
    (export "[static]fields.from-list"
      (func (param "entries" (list (tuple string (list u8)))) (result (result (own $fields) (error $he)))))
    (export "[method]fields.clone" (func (param "self" (borrow $fields)) (result (own $fields))))))

  (core module $memory-module
    (memory (export "memory") 23)
    (global $heap (mut i32) (i32.const 0x160000))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32)
      (local.set $p (i32.and (i32.add (global.get $heap) (i32.sub (local.get 2) (i32.const 1)))
                             (i32.sub (i32.const 0) (local.get 2))))
      (global.set $heap (i32.add (local.get $p) (local.get 3)))
      (if (i32.gt_u (global.get $heap) (i32.mul (memory.size) (i32.const 65536))) (then unreachable))
      (local.get $p)))
  (core instance $memory-instance (instantiate $memory-module))
  (alias core export $memory-instance "memory" (core memory $mem))
  (alias core export $memory-instance "realloc" (core func $realloc))

  (core func $from-list (canon lower (func $http "[static]fields.from-list") (memory $mem) (realloc $realloc)))
  (core func $clone (canon lower (func $http "[method]fields.clone")))
  (core instance $host
    (export "from-list" (func $from-list))
    (export "clone" (func $clone)))
  (core instance $env (export "memory" (memory $mem)))

  (core module $m
    (import "host" "from-list" (func $from-list (param i32 i32 i32)))
    (import "host" "clone" (func $clone (param i32) (result i32)))
    (import "env" "memory" (memory 1))
    ;; The shared bytes: 1 MiB of "a" (valid UTF-8 and a valid header
    ;; value), and the header name "x" at 8.
    (func $fill
      (memory.fill (i32.const 0x60000) (i32.const 0x61) (i32.const 0x100000))
      (i32.store8 (i32.const 8) (i32.const 0x78)))
    ;; n (pointer, length) pairs at 0x10000, each naming the first len
    ;; shared bytes; the list (0x10000, n) at 16, returned.
    (func (export "aliases") (param $n i32) (param $len i32) (result i32) (local $i i32)
      (call $fill)
      (block $done (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store (i32.add (i32.const 0x10000) (i32.shl (local.get $i) (i32.const 3))) (i32.const 0x60000))
        (i32.store (i32.add (i32.const 0x10004) (i32.shl (local.get $i) (i32.const 3))) (local.get $len))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
      (i32.store (i32.const 16) (i32.const 0x10000))
      (i32.store (i32.const 20) (local.get $n))
      (i32.const 16))
    ;; n header entries ("x", the first len shared bytes) at 0x10000.
    (func $entries (param $n i32) (param $len i32) (local $i i32) (local $p i32)
      (call $fill)
      (block $done (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $p (i32.add (i32.const 0x10000) (i32.shl (local.get $i) (i32.const 4))))
        (i32.store (local.get $p) (i32.const 8))
        (i32.store offset=4 (local.get $p) (i32.const 1))
        (i32.store offset=8 (local.get $p) (i32.const 0x60000))
        (i32.store offset=12 (local.get $p) (local.get $len))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))
    ;; fields.from-list of n entries whose values are all the shared 1 MiB;
    ;; returns the result's case (0 ok, 1 error).
    (func (export "from-list") (param $n i32) (result i32)
      (call $entries (local.get $n) (i32.const 0x100000))
      (call $from-list (i32.const 0x10000) (local.get $n) (i32.const 32))
      (i32.load8_u (i32.const 32)))
    ;; fields.from-list of n entries with empty values, then k clones of
    ;; them, all kept; returns 0, or 1 when from-list failed.
    (func (export "clone") (param $n i32) (param $k i32) (result i32) (local $h i32) (local $i i32)
      (call $entries (local.get $n) (i32.const 0))
      (call $from-list (i32.const 0x10000) (local.get $n) (i32.const 32))
      (if (i32.load8_u (i32.const 32)) (then (return (i32.const 1))))
      (local.set $h (i32.load (i32.const 36)))
      (block $done (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $k)))
        (drop (call $clone (local.get $h)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
      (i32.const 0))
  )
  (core instance $i (instantiate $m (with "host" (instance $host)) (with "env" (instance $env))))

  ;; n strings, each the first len shared bytes.
  (func (export "strings") (param "n" u32) (param "len" u32) (result (list string))
    (canon lift (core func $i "aliases") (memory $mem) (realloc $realloc)))
  ;; The same as n byte lists.
  (func (export "byte-lists") (param "n" u32) (param "len" u32) (result (list (list u8)))
    (canon lift (core func $i "aliases") (memory $mem) (realloc $realloc)))
  (func (export "from-list") (param "n" u32) (result u8) (canon lift (core func $i "from-list")))
  (func (export "clone") (param "n" u32) (param "k" u32) (result u8) (canon lift (core func $i "clone")))
)
