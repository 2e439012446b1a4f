;; A hand-written component that calls WASI 0.2 imports the way a hostile
;; or broken guest might: bogus, dropped and mistyped resource handles, an
;; import the host does not provide, a spin, a memory bomb, an output
;; flood. hostile_test.go says what each export must do.
(component
  (import "wasi:io/error@0.2.3" (instance $io-error
    (export "error" (type (sub resource)))))
  (alias export $io-error "error" (type $error))
  (import "wasi:io/streams@0.2.3" (instance $streams
    (alias outer 1 $error (type $e))
    (export "error" (type $error2 (eq $e)))
    (export "input-stream" (type $is (sub resource)))
    (export "output-stream" (type $os (sub resource)))
    (type $serr (variant (case "last-operation-failed" (own $error2)) (case "closed")))
    (export "stream-error" (type $se (eq $serr)))
    (export "[method]output-stream.blocking-write-and-flush"
      (func (param "self" (borrow $os)) (param "contents" (list u8)) (result (result (error $se)))))))
  (alias export $streams "output-stream" (type $output-stream))
  (alias export $streams "input-stream" (type $input-stream))
  (import "wasi:cli/stdout@0.2.3" (instance $stdout
    (alias outer 1 $output-stream (type $os))
    (export "output-stream" (type $os2 (eq $os)))
    (export "get-stdout" (func (result (own $os2))))))
  (import "wasi:cli/stdin@0.2.3" (instance $stdin
    (alias outer 1 $input-stream (type $is))
    (export "input-stream" (type $is2 (eq $is)))
    (export "get-stdin" (func (result (own $is2))))))
  (import "wasi:sockets/tcp@0.2.3" (instance $tcp
    (export "connect-somewhere" (func))))

  ;; The memory lives in a module of its own, so that the lowered imports
  ;; can name it before the main module is instantiated.
  (core module $memory-module (memory (export "memory") 1))
  (core instance $memory-instance (instantiate $memory-module))
  (alias core export $memory-instance "memory" (core memory $mem))

  (core func $get-stdout (canon lower (func $stdout "get-stdout")))
  (core func $get-stdin (canon lower (func $stdin "get-stdin")))
  (core func $write (canon lower (func $streams "[method]output-stream.blocking-write-and-flush") (memory $mem)))
  (core func $drop-output (canon resource.drop $output-stream))
  (core func $connect (canon lower (func $tcp "connect-somewhere")))
  (core instance $host
    (export "get-stdout" (func $get-stdout))
    (export "get-stdin" (func $get-stdin))
    (export "write" (func $write))
    (export "drop-output" (func $drop-output))
    (export "connect" (func $connect)))
  (core instance $env (export "memory" (memory $mem)))

  (core module $m
    (import "host" "get-stdout" (func $get-stdout (result i32)))
    (import "host" "get-stdin" (func $get-stdin (result i32)))
    (import "host" "write" (func $write (param i32 i32 i32 i32)))
    (import "host" "drop-output" (func $drop-output (param i32)))
    (import "host" "connect" (func $connect))
    (import "env" "memory" (memory 1))
    (data (i32.const 100) "hello from wat\n")
    (func (export "hello")
      (call $write (call $get-stdout) (i32.const 100) (i32.const 15) (i32.const 200)))
    ;; The write's result: 0 (ok) or 1 (error) at 200.
    (func (export "write-status") (result i32)
      (call $write (call $get-stdout) (i32.const 100) (i32.const 15) (i32.const 200))
      (i32.load8_u (i32.const 200)))
    (func (export "flood") (local $h i32)
      (local.set $h (call $get-stdout))
      (loop $again
        (call $write (local.get $h) (i32.const 1024) (i32.const 4096) (i32.const 200))
        (br $again)))
    (func (export "bogus-handle")
      (call $write (i32.const 9999) (i32.const 100) (i32.const 15) (i32.const 200)))
    (func (export "zero-handle")
      (call $write (i32.const 0) (i32.const 100) (i32.const 15) (i32.const 200)))
    (func (export "use-after-drop") (local $h i32)
      (local.set $h (call $get-stdout))
      (call $drop-output (local.get $h))
      (call $write (local.get $h) (i32.const 100) (i32.const 15) (i32.const 200)))
    (func (export "double-drop") (local $h i32)
      (local.set $h (call $get-stdout))
      (call $drop-output (local.get $h))
      (call $drop-output (local.get $h)))
    (func (export "wrong-type")
      (call $write (call $get-stdin) (i32.const 100) (i32.const 15) (i32.const 200)))
    (func (export "bad-contents")
      (call $write (call $get-stdout) (i32.const 0xfffffff0) (i32.const 100) (i32.const 200)))
    (func (export "missing-import") (call $connect))
    (func (export "spin") (loop $forever (br $forever)))
    (func (export "bomb")
      (loop $more
        (br_if $more (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
      unreachable)
  )
  (core instance $i (instantiate $m (with "host" (instance $host)) (with "env" (instance $env))))

  (func (export "hello") (canon lift (core func $i "hello")))
  (func (export "write-status") (result u8) (canon lift (core func $i "write-status")))
  (func (export "flood") (canon lift (core func $i "flood")))
  (func (export "bogus-handle") (canon lift (core func $i "bogus-handle")))
  (func (export "zero-handle") (canon lift (core func $i "zero-handle")))
  (func (export "use-after-drop") (canon lift (core func $i "use-after-drop")))
  (func (export "double-drop") (canon lift (core func $i "double-drop")))
  (func (export "wrong-type") (canon lift (core func $i "wrong-type")))
  (func (export "bad-contents") (canon lift (core func $i "bad-contents")))
  (func (export "missing-import") (canon lift (core func $i "missing-import")))
  (func (export "spin") (canon lift (core func $i "spin")))
  (func (export "bomb") (canon lift (core func $i "bomb")))
)
