/* SPDX-License-Identifier: GPL-2.0 */
/* The dump gate plugin (criu-gate.c) inside libcrs: criu.c writes it out. */
	.section .rodata
	.balign 16
	.globl crs_gate_plugin
crs_gate_plugin:
	.incbin GATE_SO
	.globl crs_gate_plugin_end
crs_gate_plugin_end:
	.section .note.GNU-stack,"",@progbits
