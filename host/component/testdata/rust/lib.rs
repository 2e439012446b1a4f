// A component written in Rust without bindings generators (none can be
// fetched here): the exports follow the canonical ABI by hand. The tests
// build it with rustc for wasm32-wasip1 (or wasm32-wasi), then embed the
// WIT and adapt it to WASI 0.2 with jco, as cargo-component does.
use std::alloc::{alloc, realloc, Layout};

#[no_mangle]
pub unsafe extern "C" fn cabi_realloc(old: *mut u8, old_size: usize, align: usize, new_size: usize) -> *mut u8 {
    if new_size == 0 {
        return align as *mut u8;
    }
    if old_size == 0 {
        return alloc(Layout::from_size_align_unchecked(new_size, align));
    }
    realloc(old, Layout::from_size_align_unchecked(old_size, align), new_size)
}

// The return area: a result<string, string> is a discriminant and a
// (pointer, length) pair at offset 4; a string is the pair.
static mut RET: [u32; 3] = [0; 3];

unsafe fn arg(ptr: *mut u8, len: usize) -> String {
    String::from_utf8_unchecked(Vec::from_raw_parts(ptr, len, len))
}

unsafe fn ret(words: [u32; 3]) -> *mut u32 {
    RET = words;
    std::ptr::addr_of_mut!(RET) as *mut u32
}

#[export_name = "read-file"]
pub unsafe extern "C" fn read_file(ptr: *mut u8, len: usize) -> *mut u32 {
    let path = arg(ptr, len);
    let (tag, s) = match std::fs::read_to_string(&path) {
        Ok(s) => (0, s),
        Err(e) => (1, e.to_string()),
    };
    let s = s.into_bytes().leak();
    ret([tag, s.as_ptr() as u32, s.len() as u32])
}

#[export_name = "greet"]
pub unsafe extern "C" fn greet(ptr: *mut u8, len: usize) -> *mut u32 {
    let name = arg(ptr, len);
    println!("greeting {name}");
    let s = format!("hello {name} from Rust").into_bytes().leak();
    ret([s.as_ptr() as u32, s.len() as u32, 0])
}
