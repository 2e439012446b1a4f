;; Imports of WASI versions other than 0.2.x are not provided. Nothing lowers
;; local:app/thing's function, and local:app/handles gives only a type:
;; neither is needed (plugin inspect says so).
(component
  (import "local:app/handles@1.0.0" (instance $handles
    (export "handle" (type (sub resource)))))
  (import "wasi:cli/environment@0.3.0" (instance $env3
    (export "get-arguments" (func (result (list string))))))
  (import "wasi:cli/environment@0.2.0" (instance $env2
    (export "get-arguments" (func (result (list string))))))
  (import "local:app/thing@1.0.0" (instance $other
    (export "f" (func))))
  (core module $m (func (export "f")))
  (core instance $i (instantiate $m))
  (func (export "f") (canon lift (core func $i "f")))
)
