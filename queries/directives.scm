; Every comment of a Fortran file: HPF directives are comments to the
; Fortran grammar, and the directive parser picks out those with an HPF
; sentinel (!HPF$, CHPF$, *HPF$). Used by server/syntax/src/parse.rs.
(comment) @comment
