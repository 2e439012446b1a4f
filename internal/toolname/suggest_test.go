package toolname

import "testing"

func TestSuggest(t *testing.T) {
	names := []string{"read_file", "list_dir", "fs__read_text_file", "fs__list_directory", "p_greet", "web__fetch", "api__fetch"}
	tests := []struct{ in, want string }{
		{"fs.read_text_file", "fs__read_text_file"}, // a dot for the separator
		{"fs/read-text-file", "fs__read_text_file"},
		{"FS__Read_Text_File", "fs__read_text_file"},
		{"read_text_file", "fs__read_text_file"}, // the server's own name
		{"list_directory", "fs__list_directory"},
		{"greet", "p_greet"}, // a plugin tool without its tool_prefix
		{"read_fiel", "read_file"},
		{"fetch", ""}, // two servers offer it: no guess
		{"web.fetch", "web__fetch"},
		{"something_else", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Suggest(tt.in, names); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
