/* SPDX-License-Identifier: GPL-2.0 */
/* Real gdb 13 MI lines: seeds for the fuzz smoke test and the fuzzer. */
#ifndef MI_SEEDS_H
#define MI_SEEDS_H

static const char *const mi_seeds[] = {
	"=thread-group-added,id=\"i1\"",
	"~\"Reading symbols from ./p...\\n\"",
	"(gdb) ",
	"1^done,bkpt={number=\"1\",type=\"breakpoint\",disp=\"keep\",enabled=\"y\",addr=\"0x00000000000011a3\",func=\"main\",file=\"p.c\",fullname=\"/tmp/mi/p.c\",line=\"6\",thread-groups=[\"i1\"],times=\"0\",original-location=\"p.c:6\"}",
	"=thread-group-started,id=\"i1\",pid=\"3136\"",
	"=library-loaded,id=\"/lib64/ld-linux-x86-64.so.2\",symbols-loaded=\"0\",thread-group=\"i1\",ranges=[{from=\"0x00007ffff7fcb060\",to=\"0x00007ffff7ff0111\"}]",
	"2^running",
	"*running,thread-id=\"all\"",
	"~\"Using host libthread_db library \\\"/lib/x86_64-linux-gnu/libthread_db.so.1\\\".\\n\"",
	"*stopped,reason=\"breakpoint-hit\",disp=\"keep\",bkptno=\"1\",frame={addr=\"0x00005555555551a3\",func=\"main\",args=[],file=\"p.c\",fullname=\"/tmp/mi/p.c\",line=\"6\",arch=\"i386:x86-64\"},thread-id=\"1\",stopped-threads=\"all\",core=\"0\"",
	"3^done,value=\"4\"",
	"6^done,stack=[frame={level=\"0\",addr=\"0x00005555555551d9\",func=\"main\",file=\"p.c\",fullname=\"/tmp/mi/p.c\",line=\"8\",arch=\"i386:x86-64\"}]",
	"7^done,threads=[{id=\"1\",target-id=\"Thread 0x7ffff7dcf740 (LWP 3136)\",name=\"p\",frame={level=\"0\",addr=\"0x00005555555551d9\",func=\"main\",args=[{name=\"v\",value=\"9\"}],file=\"p.c\",line=\"8\"},state=\"stopped\",core=\"1\"}],current-thread-id=\"1\"",
	"&\"kill\\n\"",
	"@\"\\033[0m\\t\\101\\x41\"",
	"8^error,msg=\"Undefined MI command: exec-kill\",code=\"undefined-command\"",
	"^done,a=[\"x\",\"y\"],b=[[],[{}],{c=\"1\"}],e={},f=[]",
	"+download,section=\".text\",section-size=\"6668\"",
	"^exit",
	"^connected",
};

#endif /* MI_SEEDS_H */
