// dlopen(file, mode): the stub's exported, unversioned dlopen (x86-64 SysV).
//
// Asks hipr_dlopen_decide (dlopen_interpose.cc) whether the stub handles this
// name. If it returns a handle, that is the result. Otherwise the argument
// registers are restored and control *jumps* to the real dlopen: the return
// address on the stack is still the original caller's, which glibc uses to
// pick the caller's link map for $ORIGIN / RPATH / RUNPATH expansion.
        .text
        .globl  dlopen
        .type   dlopen, @function
        .hidden hipr_dlopen_decide
        .hidden hipr_real_dlopen
        .p2align 4
dlopen:
        .cfi_startproc
        pushq   %rdi                    // file
        .cfi_adjust_cfa_offset 8
        pushq   %rsi                    // mode
        .cfi_adjust_cfa_offset 8
        subq    $8, %rsp                // 16-byte alignment for the call.
        .cfi_adjust_cfa_offset 8
        call    hipr_dlopen_decide
        addq    $8, %rsp
        .cfi_adjust_cfa_offset -8
        popq    %rsi
        .cfi_adjust_cfa_offset -8
        popq    %rdi
        .cfi_adjust_cfa_offset -8
        testq   %rax, %rax
        jz      1f
        ret
1:
        // hipr_dlopen_decide has resolved the real dlopen before returning.
        jmpq    *hipr_real_dlopen(%rip)
        .cfi_endproc
        .size   dlopen, .-dlopen

        .section .note.GNU-stack,"",@progbits
