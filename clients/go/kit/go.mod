module payments.example/kit

go 1.19

require payments.example/merchant v0.0.0

require gopkg.in/validator.v2 v2.0.1 // indirect

// The generated client (clients/go/generated) and the one module it
// imports, from Debian's golang-gopkg-validator.v2-dev: the Go module proxy
// is not a registry this project uses. generate.sh puts both in place.
replace payments.example/merchant => ../generated

replace gopkg.in/validator.v2 => ../generated/_deps/validator.v2
