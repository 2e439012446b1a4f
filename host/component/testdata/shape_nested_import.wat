;; A nested component that imports an instance: refused at load, the
;; error naming the sort with its article ("imports an instance").
(component
  (component $inner
    (import "x" (instance (export "f" (func)))))
)
