-- .hpf files are Fortran (free form, as hpf-ls reads them). Sourced at
-- startup from the runtimepath, even when the plugin itself loads lazily.
vim.filetype.add({ extension = { hpf = "fortran", HPF = "fortran" } })
