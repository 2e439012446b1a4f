;; A nested component with code of its own: refused at load.
(component
  (component $inner
    (core module $m (func (export "f")))
    (core instance $i (instantiate $m))
    (func (export "f") (canon lift (core func $i "f"))))
  (instance $x (instantiate $inner))
  (export "x" (instance $x))
)
