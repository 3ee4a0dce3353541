/* OpenCL probe (paper 003 test 8): lists every platform and device, adds two vectors on each device
 * and checks the sum on the host.  Prints "device P.D ..." per device, "vadd P.D ... VALID|INVALID"
 * per device and a last line "opencl platforms N devices M VALID|INVALID"; with no platform at all
 * the last line is "opencl platforms 0" (no ICD registered: nothing to test).
 * Build: cc -O2 -o opencl_probe opencl_probe.c -lOpenCL */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 20)

static const char *SRC =
    "__kernel void vadd(__global const float *a, __global const float *b, __global float *c) {\n"
    "    size_t i = get_global_id(0); c[i] = a[i] + b[i];\n"
    "}\n";

/* Adds the vectors on one device; returns 1 when the sum is right, and says why not otherwise. */
static int vadd(cl_device_id dev, const char *tag)
{
    static float a[N], b[N], c[N];
    for (int i = 0; i < N; ++i) { a[i] = (float)i; b[i] = 2.0f * (float)i; c[i] = -1.0f; }
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (err != CL_SUCCESS) { printf("vadd %s clCreateContext error %d INVALID\n", tag, err); return 0; }
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    cl_mem da = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
    cl_mem db = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof b, b, &err);
    cl_mem dc = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof c, NULL, &err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &err);
    err = clBuildProgram(prog, 1, &dev, "", NULL, NULL);
    if (err != CL_SUCCESS) { printf("vadd %s clBuildProgram error %d INVALID\n", tag, err); return 0; }
    cl_kernel k = clCreateKernel(prog, "vadd", &err);
    clSetKernelArg(k, 0, sizeof da, &da);
    clSetKernelArg(k, 1, sizeof db, &db);
    clSetKernelArg(k, 2, sizeof dc, &dc);
    size_t global = N;
    err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(q, dc, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL);
    if (err != CL_SUCCESS) { printf("vadd %s run error %d INVALID\n", tag, err); return 0; }
    double worst = 0;
    for (int i = 0; i < N; ++i)
        worst = fmax(worst, fabs((double)c[i] - 3.0 * i));
    printf("vadd %s n %d max_abs_error %g %s\n", tag, N, worst, worst == 0 ? "VALID" : "INVALID");
    clReleaseKernel(k); clReleaseProgram(prog);
    clReleaseMemObject(da); clReleaseMemObject(db); clReleaseMemObject(dc);
    clReleaseCommandQueue(q); clReleaseContext(ctx);
    return worst == 0;
}

int main(void)
{
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &np);
    if (err != CL_SUCCESS || np == 0) {  /* -1001: the ICD loader found no platform */
        printf("opencl platforms 0 (clGetPlatformIDs %d)\n", err);
        return 0;
    }
    cl_platform_id plats[16];
    np = np > 16 ? 16 : np;
    clGetPlatformIDs(np, plats, NULL);
    int devices = 0, ok = 1;
    for (cl_uint p = 0; p < np; ++p) {
        char name[256] = "", version[256] = "";
        clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof name, name, NULL);
        clGetPlatformInfo(plats[p], CL_PLATFORM_VERSION, sizeof version, version, NULL);
        printf("platform %u name \"%s\" version \"%s\"\n", p, name, version);
        cl_device_id devs[16];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS)
            nd = 0;
        for (cl_uint d = 0; d < nd && d < 16; ++d) {
            char dname[256] = "", tag[32];
            cl_device_type type = 0;
            clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof dname, dname, NULL);
            clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof type, &type, NULL);
            snprintf(tag, sizeof tag, "%u.%u", p, d);
            printf("device %s name \"%s\" type %s\n", tag, dname,
                   (type & CL_DEVICE_TYPE_GPU) ? "GPU" : (type & CL_DEVICE_TYPE_CPU) ? "CPU" : "other");
            ok &= vadd(devs[d], tag);
            ++devices;
        }
    }
    printf("opencl platforms %u devices %d %s\n", np, devices, ok && devices > 0 ? "VALID" : "INVALID");
    return ok && devices > 0 ? 0 : 1;
}
