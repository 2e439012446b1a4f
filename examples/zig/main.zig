// A complete agenthost/1 plugin in Zig (0.13/0.14 standard library, no libc):
// one tool, "greeting", that returns the first line of greeting.txt in the
// first mount. Zig's std calls path_open itself, which refuses absolute
// paths; std.fs.cwd() is the first preopen, so open paths relative to it.
//
//   zig build-exe main.zig -target wasm32-wasi -O ReleaseSmall -femit-bin=greeting.wasm
const std = @import("std");

const manifest =
    \\{"protocol":"agenthost/1","name":"greeting","version":"0.1.0",
    \\ "tools":[{"name":"greeting","description":"Return the first line of greeting.txt in the workspace.",
    \\  "input_schema":{"type":"object","properties":{},"additionalProperties":false}}],
    \\ "requests":{"fs":[{"guest":"/workspace","access":"ro","reason":"read greeting.txt"}]}}
;

/// Writes one result, the text JSON-escaped, and returns the exit code.
fn reply(text: []const u8, is_error: bool) !u8 {
    const out = std.io.getStdOut().writer();
    try out.writeAll("{\"content\":[{\"type\":\"text\",\"text\":\"");
    for (text) |c| {
        switch (c) {
            '"', '\\' => try out.print("\\{c}", .{c}),
            0...0x1f => try out.print("\\u{x:0>4}", .{c}),
            else => try out.writeByte(c),
        }
    }
    try out.print("\"}}],\"is_error\":{s}}}", .{if (is_error) "true" else "false"});
    return if (is_error) 1 else 0;
}

fn call(alloc: std.mem.Allocator) !u8 {
    // Read the whole request; a real tool parses it with std.json.
    _ = try std.io.getStdIn().readToEndAlloc(alloc, 64 << 20);
    const file = std.fs.cwd().openFile("greeting.txt", .{}) catch |err| {
        const msg = try std.fmt.allocPrint(alloc, "greeting.txt: {s} (is /workspace mounted?)", .{@errorName(err)});
        return reply(msg, true);
    };
    defer file.close();
    const text = try file.readToEndAlloc(alloc, 4 << 20);
    const end = std.mem.indexOfScalar(u8, text, '\n') orelse text.len;
    return reply(text[0..end], false);
}

pub fn main() !u8 {
    const alloc = std.heap.page_allocator;
    var env = try std.process.getEnvMap(alloc);
    defer env.deinit();
    const mode = env.get("AGENTHOST_MODE") orelse "";
    if (std.mem.eql(u8, mode, "describe")) {
        try std.io.getStdOut().writer().writeAll(manifest);
        return 0;
    }
    if (std.mem.eql(u8, mode, "call")) return call(alloc);
    try std.io.getStdErr().writer().writeAll("AGENTHOST_MODE must be describe or call\n");
    return 2;
}
