module example.com/hypermcp

go 1.24
