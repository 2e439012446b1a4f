;; A component that defines and exports a resource: refused at load.
(component
  (type $r (resource (rep i32)))
  (core func $new (canon resource.new $r))
  (export "counter" (type $r))
)
