;; extends
; HPF directives in Fortran highlighting (Neovim's built-in tree-sitter,
; tree-sitter-fortran 0.6). To the Fortran grammar a directive is a
; `comment`; the sentinel `!HPF$` (any case) makes it a directive, so the
; whole line is highlighted as one. `CHPF$` and `*HPF$` are matched too,
; although tree-sitter-fortran parses free form only and never makes a
; fixed-form line starting with C or * a `comment`. The first line lets the
; file extend another Fortran highlights query (e.g. nvim-treesitter's)
; instead of replacing it. Priority 105 puts the directive above
; `(comment) @comment` (100) and below the server's semantic tokens (125),
; which colour the directive's keywords, templates and processors. Installed
; for Neovim as editors/nvim/after/queries/fortran/highlights.scm (a copy
; that tests/nvim/run.sh checks identical).
((comment) @keyword.directive @nospell
  (#match? @keyword.directive "^[!cC*][hH][pP][fF]\\$")
  (#set! priority 105))
