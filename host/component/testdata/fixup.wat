;; The linking pattern of wit-component's output: a shim module owns a
;; table its exports call through, and a fixup module, importing from the
;; module named "" (which wazero does not accept as it is), fills the
;; table once the functions exist.
(component
  (core module $shim
    (type $t (func (result i32)))
    (table (export "$imports") 1 1 funcref)
    (func (export "0") (result i32) (call_indirect (type $t) (i32.const 0))))
  (core module $impl (func (export "answer") (result i32) (i32.const 42)))
  (core instance $shim-i (instantiate $shim))
  (core instance $impl-i (instantiate $impl))
  (core module $fixup
    (import "" "$imports" (table 1 1 funcref))
    (import "" "0" (func $f (result i32)))
    (elem (i32.const 0) func $f))
  (alias core export $shim-i "$imports" (core table $table))
  (alias core export $impl-i "answer" (core func $answer))
  (core instance $bundle (export "$imports" (table $table)) (export "0" (func $answer)))
  (core instance (instantiate $fixup (with "" (instance $bundle))))
  (func (export "answer") (result u32) (canon lift (core func $shim-i "0")))
)
