/* Toolchain probe (C): compute a known sum and say whether it is right. */
#include <stdio.h>

int main(void)
{
    long sum = 0;
    for (long i = 1; i <= 1000; ++i)
        sum += i;
    printf("toolchain c: sum 1..1000 = %ld %s\n", sum, sum == 500500 ? "VALID" : "INVALID");
    return sum == 500500 ? 0 : 1;
}
